"""Live providers, built by name and wrapped in the one retry policy.

The vendor SDKs are imported only when a live provider is built, so importing the Provider
protocol (harness.providers.base) or running on the simulator never loads them.
"""

from __future__ import annotations

from harness.providers._errors import AccountError, MissingKeyError, billed_usage
from harness.providers.base import Provider
from harness.providers.retry import RetryingProvider, RetryPolicy

__all__ = [
    "LIVE_PROVIDERS",
    "AccountError",
    "MissingKeyError",
    "RetryPolicy",
    "RetryingProvider",
    "billed_usage",
    "build_adapter",
    "build_provider",
]

LIVE_PROVIDERS = ("anthropic", "gemini")


def build_provider(name: str, policy: RetryPolicy, *, timeout_s: float) -> Provider:
    """The live provider `name`, reading its key from the environment, with retries.

    Raises MissingKeyError (naming the variable to set) when the key is absent, so a run
    fails at start-up, before anything is spent. The simulator is built by the runner.
    """
    return RetryingProvider(build_adapter(name, timeout_s=timeout_s), policy)


def build_adapter(name: str, *, timeout_s: float) -> Provider:
    """The bare adapter for `name` (one request per call): for a caller that owns retries,
    as harness.calls.Caller does so that every try is reserved against the budget."""
    if name == "anthropic":
        from harness.providers.anthropic import AnthropicProvider

        return AnthropicProvider.from_env(timeout_s=timeout_s)
    if name == "gemini":
        from harness.providers.gemini import GeminiProvider

        return GeminiProvider.from_env(timeout_s=timeout_s)
    raise ValueError(
        f"unknown live provider {name!r}: expected one of {', '.join(LIVE_PROVIDERS)} "
        "(fix the route's provider: in harness.yaml)"
    )
