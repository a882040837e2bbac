"""Where an OpenAI-compatible provider is and how it is keyed: the built-in `openai`, or a
named endpoint of the config (a gateway, a local vLLM or Ollama server)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OPENAI", "Endpoint"]


@dataclass(frozen=True)
class Endpoint:
    """One OpenAI-compatible endpoint.

    `base_url` None is the SDK's own choice (OPENAI_BASE_URL, else api.openai.com): only the
    built-in endpoint has it. `api_key_env` None means no key is sent (a local server); a
    named endpoint never falls back to OPENAI_API_KEY, so OpenAI's key never reaches another
    server. `builtin` is OpenAI itself: its batch API, `max_completion_tokens`, the
    organization and project variables, a prompt cache key.
    """

    name: str
    base_url: str | None
    api_key_env: str | None
    builtin: bool = False


OPENAI = Endpoint("openai", None, "OPENAI_API_KEY", builtin=True)
