"""Shared pieces of error classification: keys, status kinds, retry hints, billed usage."""

from __future__ import annotations

import email.utils
import json
import os
import re
import time
from collections.abc import Mapping
from urllib.parse import urlsplit

import httpx2

from harness.keys import declare, key_problem
from harness.llm import AuthenticationError, ErrorKind, ProviderError, Usage

__all__ = [
    "AccountError",
    "MissingKeyError",
    "account_error",
    "auth_error",
    "base_url_problem",
    "describe",
    "gateway_lost",
    "is_context_too_long",
    "kind_for_status",
    "malformed",
    "not_a_reply",
    "outcome_unknown",
    "read_key",
    "redact",
    "retry_after_s",
    "rpc_retry_delay_s",
    "transport_error",
    "with_billed_usage",
]


class MissingKeyError(ValueError):
    """A route needs a provider whose API key is not in the environment (a start-up error)."""


class AccountError(AuthenticationError):
    """The account cannot pay (spend limit reached, billing problem): every later call fails."""


# The variable each vendor's SDK reads its base URL from (a gateway), if set.
BASE_URL_VARIABLES = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "gemini": "GOOGLE_GEMINI_BASE_URL",
    "openai": "OPENAI_BASE_URL",
}


def read_key(*names: str, provider: str) -> tuple[str, str]:
    """The first non-empty variable among `names`, as (value, variable name), after the
    vendor's base URL and the key are checked: a problem is a start-up error naming the
    variable, never quoting a key. Every variable named is a secret from now on (scrubbed)."""
    declare(*names)
    problem = base_url_problem(BASE_URL_VARIABLES.get(provider))
    if problem:
        raise MissingKeyError(problem)
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            problem = key_problem(name, value)
            if problem:
                raise MissingKeyError(f"the {provider} provider's API key: {problem}")
            return value, name
    wanted = " or ".join(names)
    raise MissingKeyError(
        f"the {provider} provider needs an API key: set {wanted} in the environment, "
        f"or route no tier to {provider} (harness.yaml routes:)"
    )


def base_url_problem(name: str | None) -> str | None:
    """Why the base URL in variable `name` cannot be sent to, or None (unset is fine).

    The SDK would fail every call on it at night; the value is not quoted, since a gateway
    URL may carry credentials."""
    value = os.environ.get(name, "") if name else ""
    if not value:
        return None
    fix = f"set {name} to a URL such as https://gateway.example.com, or unset it"
    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018  # raises ValueError on a port that is not a number
    except ValueError:
        return f"{name} is not a usable base URL (its port is not a number); {fix}"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{name} is not a usable base URL (it needs http:// or https:// and a host); {fix}"
    if key_problem(name, value):
        return f"{name} holds a control character, space or non-ASCII character; {fix}"
    return None


def auth_error(provider: str, key_source: str, text: str, status: int | None) -> ProviderError:
    """The key was refused: an AuthenticationError, which stops the run with this message."""
    return AuthenticationError(
        ErrorKind.AUTH,
        f"the key from {key_source} was refused ({text}); check it, or the gateway's credentials",
        status,
        provider=provider,
    )


def account_error(provider: str, text: str, status: int | None, where: str) -> ProviderError:
    """The account cannot pay (spend limit, billing): an AccountError, which stops the run."""
    return AccountError(
        ErrorKind.AUTH,
        f"the account cannot pay for calls ({text}); check {where}",
        status,
        provider=provider,
    )


def redact(text: str, secret: str) -> str:
    """`text` with every occurrence of `secret` masked; vendors and gateways may echo keys."""
    return text.replace(secret, "[REDACTED]") if secret and secret in text else text


def kind_for_status(status: int) -> ErrorKind:
    """The default reading of an HTTP status; adapters refine it with the vendor's body."""
    if status == 429:
        return ErrorKind.RATE_LIMIT
    if status in (401, 403):
        return ErrorKind.AUTH
    if status in (408, 409, 499) or status >= 500:
        return ErrorKind.TRANSIENT
    return ErrorKind.FATAL


# Anthropic: "prompt is too long: 250000 tokens > 200000 maximum"; Gemini: "The input token
# count (1200000) exceeds the maximum number of tokens allowed (1048576)"; OpenAI and vLLM:
# "This model's maximum context length is 8192 tokens. However, you requested ..."; llama.cpp:
# "the request exceeds the available context size".
_TOO_LONG = re.compile(
    r"prompt is too long|input token count.*exceeds|exceeds the maximum number of tokens"
    r"|maximum context length is|exceeds the available context size"
    r"|context (window|length) (exceeded|is exceeded)|too many (input )?tokens",
    re.IGNORECASE | re.DOTALL,
)


def is_context_too_long(status: int | None, message: str) -> bool:
    """A refusal of this prompt's size: an outcome for the task, not a fault to retry."""
    return status == 413 or (status == 400 and bool(_TOO_LONG.search(message)))


def retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, else `retry-after` (secs or date)."""
    if not headers:
        return None
    try:
        return max(0.0, float(headers["retry-after-ms"]) / 1000)
    except (KeyError, TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        return None if parsed is None else max(0.0, email.utils.mktime_tz(parsed) - time.time())


def rpc_retry_delay_s(details: object) -> float | None:
    """google.rpc.RetryInfo's retryDelay ("35s", "1.5s") from an error body, if any."""
    error = details.get("error", details) if isinstance(details, dict) else {}
    for item in error.get("details", []) if isinstance(error, dict) else []:
        delay = item.get("retryDelay") if isinstance(item, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                return max(0.0, float(delay[:-1]))
            except ValueError:
                return None
    return None


# Failures before the request was sent: the vendor cannot have billed for it. Every other
# transport failure (a read timeout, a connection lost mid-answer) may follow a billed request.
_NOT_SENT = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout, httpx2.ProxyError)
# A gateway that gave up waiting for the vendor: the vendor may have answered, and billed,
# all the same (a timeout after the request was sent). Any other 5xx is a server's error
# (the vendor's, or a gateway's error page), which the vendor does not bill.
_GATEWAY_TIMEOUT = 504


def gateway_lost(status: int | None) -> bool:
    """An HTTP error status behind which the vendor may still have billed the request."""
    return status == _GATEWAY_TIMEOUT


def outcome_unknown(error: ProviderError) -> ProviderError:
    """`error`, marked as one the vendor may have billed in full (the request had reached it)."""
    error.outcome_unknown = True
    return error


def transport_error(exc: BaseException, provider: str) -> ProviderError | None:
    """Classify a raw httpx2 exception (the SDKs leave some unwrapped), or None if not one."""
    sent = not isinstance(exc, _NOT_SENT)
    if isinstance(exc, httpx2.TimeoutException):
        return ProviderError(
            ErrorKind.TRANSIENT,
            f"timed out ({type(exc).__name__})",
            None,
            provider=provider,
            transport=True,
            outcome_unknown=sent,
        )
    if isinstance(exc, httpx2.UnsupportedProtocol | httpx2.LocalProtocolError | httpx2.InvalidURL):
        # A bad base URL (e.g. a typo in a *_BASE_URL variable): retrying cannot fix it.
        return ProviderError(
            ErrorKind.FATAL,
            f"cannot send the request ({type(exc).__name__}: {exc}); check the base-URL variable",
            None,
            provider=provider,
            transport=True,
        )
    if isinstance(exc, httpx2.TransportError | httpx2.DecodingError):
        return ProviderError(
            ErrorKind.TRANSIENT,
            f"connection failed ({type(exc).__name__})",
            None,
            provider=provider,
            transport=True,
            outcome_unknown=sent,
        )
    return None


def describe(exc: BaseException) -> str:
    """A parse failure in words that never quote the body (replies stay out of logs)."""
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON ({exc.msg} at char {exc.pos})"
    return f"unparseable body ({type(exc).__name__})"


def malformed(provider: str, what: str, billed: Usage | None = None) -> ProviderError:
    """A 200 whose body is the vendor's but unusable (truncated, garbled, incomplete).
    Retried as transient: usually a gateway hiccup, bounded.

    The vendor answered, so it billed: `billed` when the body said how much, else unknown.
    """
    return ProviderError(
        ErrorKind.TRANSIENT,
        f"malformed response: {what}",
        200,
        provider=provider,
        billed=billed or Usage(),
        outcome_unknown=billed is None,
    )


def not_a_reply(provider: str, what: str) -> ProviderError:
    """A 200 whose body is not the vendor's reply at all: an HTML page, JSON without the
    vendor's fields (a gateway's or a proxy's page). Retried as transient. Nothing says the
    vendor billed anything, so nothing is charged: a night that gets only such pages halts
    (calls.Caller) rather than paying for them."""
    return ProviderError(
        ErrorKind.TRANSIENT, f"not the vendor's reply: {what}", 200, provider=provider
    )


def with_billed_usage(error: ProviderError, usage: Usage) -> ProviderError:
    """`error`, with `usage` (tokens billed before it failed) added to what it carries."""
    error.billed += usage
    return error
