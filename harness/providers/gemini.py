"""Gemini adapter: generate_content through `google-genai`, translated into a Completion.

One SDK call is one HTTP request here: the SDK's retries (no retry options), automatic
function calling and automatic continuation are all off. A reply the server splits with
finish reason CONTINUATION is followed by this adapter, a bounded number of hops, so every
billed hop is counted and a failure part-way reports what was already billed.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from typing import Any

import structlog
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from harness.llm import (
    CallRequest,
    Completion,
    ErrorKind,
    Provider,
    ProviderError,
    ServiceTier,
    StopReason,
    Usage,
)
from harness.providers.deadline import ReadDeadline
from harness.providers.errors import (
    account_error,
    auth_error,
    describe,
    gateway_lost,
    is_context_too_long,
    kind_for_status,
    malformed,
    not_a_reply,
    outcome_unknown,
    read_key,
    redact,
    retry_after_s,
    rpc_retry_delay_s,
    transport_error,
    with_billed_usage,
)
from harness.providers.gemini_wire import (
    NAME,
    Hop,
    Outcome,
    build_config,
    build_contents,
    read_response,
)

__all__ = ["GeminiProvider"]

log = structlog.get_logger()
_BAD_KEY = re.compile(r"API_KEY_INVALID|API key not valid|API key expired", re.IGNORECASE)
# Out of money, not out of rate: waiting will not help. ("...check your plan and billing
# details" is Google's ordinary per-minute quota text, so "billing" alone is not a sign.)
_NO_FUNDS = re.compile(r"spending cap|spend(ing)? limit|prepaid (credit|balance)", re.IGNORECASE)
# A quota of zero is no rate limit: the project may not use the model at all until billing
# is enabled ("Quota exceeded for metric: ...free_tier_requests, limit: 0, model: ...").
_NO_QUOTA = re.compile(r"\blimit: ?0\b(?![.\d])")
# FAILED_PRECONDITION for the account, not the request: "User location is not supported for
# the API use without a billing account linked", "...free tier is not available in your
# country. Please enable billing...".
_NO_BILLING = re.compile(r"billing|location is not supported|not available in your", re.I)
_MALFORMED = (ValueError, TypeError, AttributeError, KeyError, IndexError)
# Google's latency target for flex is 1-15 minutes (ai.google.dev/gemini-api/docs/optimization):
# a flex request is given that long before it counts as timed out.
FLEX_TIMEOUT_S = 900.0


class GeminiProvider(Provider):
    """Gemini through the `google-genai` SDK (Gemini Developer API, API key).

    The client is kept on the provider for its whole life: it closes its HTTP client when
    garbage-collected. The base URL is never passed: the SDK reads GOOGLE_GEMINI_BASE_URL.
    """

    name = NAME

    def __init__(
        self,
        api_key: str,
        *,
        timeout_s: float,
        key_source: str = "api_key",
        max_hops: int = 4,
        flex_timeout_s: float = FLEX_TIMEOUT_S,
    ) -> None:
        if timeout_s <= 0 or max_hops < 1:
            raise ValueError(f"need timeout_s > 0 and max_hops >= 1, got {timeout_s}, {max_hops}")
        # A flex request may queue for minutes: it gets the longer of the two timeouts.
        self._flex_options = types.HttpOptions(
            timeout=max(1, round(max(timeout_s, flex_timeout_s) * 1000))
        )
        self._key = api_key  # kept only to scrub it from any error text
        self._key_source = key_source
        self._max_hops = max_hops
        # Requests one call may make (continuation hops): the caller reserves for all of them.
        self.requests_per_call = max_hops
        # HttpOptions.timeout is in MILLISECONDS (and unset means no timeout at all).
        # The timeout bounds each read; the deadline, reading the whole body after its headers.
        self._deadline, self._read_s = ReadDeadline(), timeout_s
        hooks = {"event_hooks": {"response": [self._deadline.hook]}}
        options = types.HttpOptions(timeout=max(1, round(timeout_s * 1000)), client_args=hooks)
        self._client = genai.Client(api_key=api_key, vertexai=False, http_options=options)

    @property
    def client(self) -> Any:
        """The SDK client (retries off, timeouts set), shared with this vendor's batches."""
        return self._client

    @classmethod
    def from_env(cls, *, timeout_s: float) -> GeminiProvider:
        """Read GEMINI_API_KEY, else GOOGLE_API_KEY; MissingKeyError naming both when unset."""
        key, source = read_key("GEMINI_API_KEY", "GOOGLE_API_KEY", provider=NAME)
        return cls(key, timeout_s=timeout_s, key_source=source)

    def complete(self, request: CallRequest) -> Completion:
        """One call (plus continuation hops); outcomes are Completions, faults ProviderErrors.

        A flex route asks for Gemini Flex; a flex request the vendor sheds is sent once more
        at the standard tier (what was billed before the shed is added to its usage), and
        the Completion says which tier served it, which is what the caller prices.
        """
        started = time.monotonic()
        flex = request.route.service_tier is ServiceTier.FLEX
        try:
            return self._call(request, started, flex=flex)
        except ProviderError as exc:
            if not (flex and _shed(exc)):
                raise
            shed = exc
        log.warning(
            "flex_shed_fallback",
            step=request.step,
            attempt=request.attempt,
            model=request.route.model,
            status=shed.status,
            error=shed.message[:200],
        )
        try:
            completion = self._call(request, started, flex=False)
        except ProviderError as exc:
            raise with_billed_usage(exc, shed.billed) from shed
        return dataclasses.replace(completion, usage=completion.usage + shed.billed)

    def _call(self, request: CallRequest, started: float, *, flex: bool) -> Completion:
        route, contents = request.route, build_contents(request)
        config = build_config(request, flex=flex)
        if flex:
            config = config.model_copy(update={"http_options": self._flex_options})
        usage, hops, token = Usage(), [], None
        try:
            for _ in range(self._max_hops):
                hop = self._hop(route.model, contents, config, token, usage)
                usage, token = usage + hop.usage, hop.token
                hops.append(hop)
                if token is None:
                    break
            else:
                detail = f"CONTINUATION: unfinished after {self._max_hops} requests"
                hop = Hop(Usage(), "", StopReason.MAX_TOKENS, detail, None, None)
        except Outcome as outcome:
            usage, hops = usage + outcome.usage, []
            hop = Hop(Usage(), "", outcome.stop, outcome.detail, None, None)
        return Completion(
            "".join(h.text for h in hops),
            usage,
            hop.stop,
            hop.model or route.model,
            NAME,
            time.monotonic() - started,
            detail=hop.detail,
            service_tier=_served(hops, flex),
        )

    def _hop(
        self,
        model: str,
        contents: list[types.Content],
        config: types.GenerateContentConfig,
        token: bytes | None,
        billed: Usage,
    ) -> Hop:
        """One HTTP request. Errors carry `billed`, the usage of the hops before this one."""
        if token is not None:
            config = config.model_copy(update={"continuation_token": token})
        watch = None
        try:
            with self._deadline.within(self._body_s(config)) as watch:
                response = self._client.models.generate_content(
                    model=model, contents=contents, config=config
                )
            return read_response(response)
        except genai_errors.APIError as exc:
            message = redact(exc.message or str(exc), self._key)
            if is_context_too_long(exc.code, message):
                raise Outcome(StopReason.CONTEXT_TOO_LONG, message) from exc
            raise with_billed_usage(self.classify(exc, message, model), billed) from exc
        except Outcome:
            raise
        except ProviderError as exc:
            raise with_billed_usage(exc, billed) from None
        except Exception as exc:  # raw httpx2 errors, JSON errors on a 200, odd bodies
            if watch is not None and watch.expired:
                error = outcome_unknown(
                    ProviderError(
                        ErrorKind.TRANSIENT, "the answer was not read in time", 200, provider=NAME
                    )
                )
                raise with_billed_usage(error, billed) from exc
            error = transport_error(exc, NAME)
            if error is None and not isinstance(exc, _MALFORMED):
                raise
            raise with_billed_usage(error or _unreadable(exc), billed) from exc

    def _body_s(self, config: types.GenerateContentConfig) -> float:
        """How long the whole request may take from the moment it is sent (headers arrive
        once the reply is generated, the body right after): its own timeout, twice over."""
        options = config.http_options
        timeout_ms = options.timeout if options is not None and options.timeout else None
        return 2 * (timeout_ms / 1000 if timeout_ms else self._read_s)

    def classify(self, exc: genai_errors.APIError, message: str, model: str) -> ProviderError:
        """HTTP status and Google's status string → how the retry policy treats it."""
        code, status = exc.code, exc.status or ""
        text = f"{status}: {message}".strip(": ")
        if code == 400 and _BAD_KEY.search(str(exc.details)):
            code = 401
        if _cannot_pay(code, status, message):
            return account_error(NAME, text, code, "Google AI Studio (billing, spending cap)")
        kind = kind_for_status(code)
        if kind is ErrorKind.AUTH:
            return auth_error(NAME, self._key_source, text, exc.code)
        if code == 404:
            text = f"{text} (is model {model!r} retired or misspelt? see prices.yaml)"
        wait = None
        if kind in (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT):  # a server's hint, if any
            wait = retry_after_s(getattr(exc.response, "headers", None))
            wait = rpc_retry_delay_s(exc.details) if wait is None else wait
        lost = gateway_lost(exc.code)
        return ProviderError(kind, text, exc.code, wait, provider=NAME, outcome_unknown=lost)


def _unreadable(exc: Exception) -> ProviderError:
    """A 200 body the SDK could not read: the vendor's JSON object, garbled or cut (billed,
    by an unknown amount), or no JSON object at all (an HTML page, an empty body: not the
    vendor's reply, nothing billed)."""
    if isinstance(exc, json.JSONDecodeError) and not exc.doc.lstrip().startswith("{"):
        return not_a_reply(NAME, describe(exc))
    return malformed(NAME, describe(exc))


def _cannot_pay(code: int, status: str, message: str) -> bool:
    """The account, not this request, is refused: a 402, a spending cap, a zero quota (no
    billing for this model), or billing or location preconditions."""
    if code == 402:
        return True
    if code == 429:
        return bool(_NO_FUNDS.search(message) or _NO_QUOTA.search(message))
    return code == 400 and status == "FAILED_PRECONDITION" and bool(_NO_BILLING.search(message))


def _shed(exc: ProviderError) -> bool:
    """A flex request the vendor would not serve now (a 429 or 503 that is not the account's
    fault): Google documents flex as best-effort and sheddable without a distinct error
    body we could confirm, so any such status on a flex request is taken as a shed."""
    return exc.status in (429, 503) and exc.kind in (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT)


def _served(hops: list[Hop], flex: bool) -> ServiceTier:
    """The tier the call is billed at: standard if any request was served standard."""
    if not flex or any(h.tier is ServiceTier.STANDARD for h in hops):
        return ServiceTier.STANDARD
    return ServiceTier.FLEX
