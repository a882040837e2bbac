"""The vendor adapters (Anthropic, Gemini, OpenAI and its compatible endpoints, their batch
APIs) and replay, built by name.

Calls go through harness.calls.caller.Caller, which owns retries (RetryPolicy) over the
bare adapter `build_adapter` returns; `build_batch_adapter` gives a vendor's batch API
(harness.llm.BatchProvider) the same way. The vendor SDKs are imported only when
a live adapter is built, so importing this package, the Provider protocol
(harness.llm) or running on the simulator never loads them.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.llm import BatchProvider, Provider
from harness.providers.endpoint import OPENAI, Endpoint
from harness.providers.errors import AccountError, MissingKeyError
from harness.providers.replay import ReplayProvider

__all__ = [
    "BATCH_PROVIDERS",
    "LIVE_PROVIDERS",
    "OPENAI",
    "AccountError",
    "Endpoint",
    "MissingKeyError",
    "ReplayProvider",
    "build_adapter",
    "build_batch_adapter",
]

LIVE_PROVIDERS = ("anthropic", "gemini", "openai")  # and any endpoint the config names
BATCH_PROVIDERS = ("anthropic", "gemini", "openai")  # a named endpoint has no batch API here


def build_adapter(
    name: str, *, timeout_s: float, endpoints: Mapping[str, Endpoint] | None = None
) -> Provider:
    """The live adapter `name` (one request per call, no retries of its own), keyed from the
    environment: a vendor, the built-in `openai`, or one of `endpoints` (config
    `endpoints:`). Raises MissingKeyError (naming the variable to set) when the key is
    absent, so a run fails at start-up, before anything is spent. The simulator is built by
    the runner.
    """
    endpoint = OPENAI if name == "openai" else (endpoints or {}).get(name)
    if endpoint is not None:
        from harness.providers.openai import OpenAIProvider

        return OpenAIProvider.from_endpoint(endpoint, timeout_s=timeout_s)
    if name == "anthropic":
        from harness.providers.anthropic import AnthropicProvider

        return AnthropicProvider.from_env(timeout_s=timeout_s)
    if name == "gemini":
        from harness.providers.gemini import GeminiProvider

        return GeminiProvider.from_env(timeout_s=timeout_s)
    raise ValueError(
        f"unknown live provider {name!r}: expected one of {', '.join(LIVE_PROVIDERS)} "
        "or an endpoint under endpoints: (fix the route's provider: in harness.yaml)"
    )


def build_batch_adapter(name: str, *, timeout_s: float) -> BatchProvider:
    """The batch API of live provider `name`, keyed from the environment like `build_adapter`
    (MissingKeyError names the variable to set); SDK retries off, SDKs imported lazily."""
    if name == "anthropic":
        from harness.providers.anthropic_batch import AnthropicBatches

        return AnthropicBatches.from_env(timeout_s=timeout_s)
    if name == "gemini":
        from harness.providers.gemini_batch import GeminiBatches

        return GeminiBatches.from_env(timeout_s=timeout_s)
    if name == "openai":
        from harness.providers.openai_batch import OpenAIBatches

        return OpenAIBatches.from_endpoint(OPENAI, timeout_s=timeout_s)
    raise ValueError(
        f"no batch API for provider {name!r}: expected one of {', '.join(BATCH_PROVIDERS)} "
        "(fix the route's provider: in harness.yaml, or leave its steps out of batch:)"
    )
