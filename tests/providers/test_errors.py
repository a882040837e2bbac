"""The shared classification pieces: status kinds, retry hints, size refusals, redaction."""

from __future__ import annotations

import email.utils
import time

import httpx2
import pytest
from google.genai import types
from hypothesis import given
from hypothesis import strategies as st

from harness.llm import ErrorKind, ProviderError, Usage
from harness.providers.errors import (
    is_context_too_long,
    kind_for_status,
    redact,
    retry_after_s,
    transport_error,
    with_billed_usage,
)
from harness.providers.gemini_wire import usage_of as gemini_usage

K = ErrorKind


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, K.RATE_LIMIT),
        (401, K.AUTH),
        (403, K.AUTH),
        (408, K.TRANSIENT),
        (409, K.TRANSIENT),
        (499, K.TRANSIENT),
        (500, K.TRANSIENT),
        (503, K.TRANSIENT),
        (529, K.TRANSIENT),
        (400, K.FATAL),
        (404, K.FATAL),
        (413, K.FATAL),
        (422, K.FATAL),
    ],
)
def test_status_kinds(status, kind):
    """The default reading of each HTTP status, before the vendor's body refines it."""
    assert kind_for_status(status) == kind


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "1"}, 0.001),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "junk", "retry-after": "3"}, 3.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-5"}, 0.0),
        ({}, None),
        (None, None),
    ],
)
def test_retry_after_headers(headers, seconds):
    """retry-after-ms wins over retry-after; junk means no hint; never negative."""
    assert retry_after_s(headers) == seconds


def test_retry_after_as_http_date():
    """retry-after may be an HTTP date: the wait is the time until then."""
    when = email.utils.formatdate(time.time() + 30, usegmt=True)

    assert 28 <= retry_after_s({"retry-after": when}) <= 30


@pytest.mark.parametrize(
    ("status", "message", "too_long"),
    [
        (400, "prompt is too long: 250000 tokens > 200000 maximum", True),
        (400, "The input token count (1200000) exceeds the maximum number of tokens allowed", True),
        (413, "Request exceeds the maximum allowed number of bytes", True),
        (400, "max_tokens: must be less than 128000", False),
        (429, "prompt is too long", False),
    ],
)
def test_context_too_long_is_recognised(status, message, too_long):
    """Only a 400 about prompt size, or a 413, is a context-too-long outcome."""
    assert is_context_too_long(status, message) is too_long


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (httpx2.ConnectError("refused"), K.TRANSIENT),
        (httpx2.ReadTimeout("slow"), K.TRANSIENT),
        (httpx2.RemoteProtocolError("cut"), K.TRANSIENT),
        (httpx2.ReadError("reset"), K.TRANSIENT),
        (httpx2.UnsupportedProtocol("ftp://"), K.FATAL),
    ],
)
def test_raw_httpx2_errors_are_classified(exc, kind):
    """Raw transport errors are transient; a malformed base URL is fatal."""
    assert transport_error(exc, "p").kind == kind


def test_other_exceptions_are_not_transport_errors():
    """Anything that is not an httpx2 error is left to the caller."""
    assert transport_error(ValueError("x"), "p") is None


def test_redact_masks_every_occurrence():
    """Every copy of the secret is masked; text without it is returned as is."""
    assert (redact("k=s3cr3t, again s3cr3t", "s3cr3t"), redact("clean", "s3cr3t")) == (
        "k=[REDACTED], again [REDACTED]",
        "clean",
    )


def test_billed_usage_accumulates_on_an_error():
    """Billed usage recorded twice on one error adds up; an error without it bills zero."""
    error = ProviderError(ErrorKind.TRANSIENT, "cut", provider="p")
    with_billed_usage(error, Usage(1, 2, 3, 4))
    with_billed_usage(error, Usage(10, 0, 0, 1))

    assert (error.billed, ProviderError(K.FATAL, "x").billed) == (Usage(11, 2, 3, 5), Usage())


@given(
    prompt=st.integers(0, 10**7),
    cached_share=st.floats(0, 1),
    candidates=st.integers(0, 10**6),
    thoughts=st.integers(0, 10**6),
)
def test_gemini_usage_conserves_tokens(prompt, cached_share, candidates, thoughts):
    """Fresh + cached = promptTokenCount, and output = candidates + thoughts, always."""
    cached = int(prompt * cached_share)
    meta = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        cached_content_token_count=cached,
        candidates_token_count=candidates,
        thoughts_token_count=thoughts,
    )

    usage = gemini_usage(meta)

    assert (usage.input_tokens + usage.cache_read_tokens, usage.output_tokens) == (
        prompt,
        candidates + thoughts,
    )
