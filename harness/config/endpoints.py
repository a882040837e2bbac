"""`endpoints:`: named OpenAI-compatible servers (a gateway, a local vLLM or Ollama), each with
its own base URL, key variable, model prices and concurrency; a route's `provider` may name
one. The built-in `openai` needs no entry: it reads OPENAI_API_KEY / OPENAI_BASE_URL and
prices from the dated price table."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from harness.pricing import Price

__all__ = ["BUILTIN_PROVIDERS", "EndpointConfig", "EndpointModel", "endpoint_prices"]

# Providers that need no entry under endpoints:, so no endpoint may take their names.
BUILTIN_PROVIDERS = ("anthropic", "gemini", "openai", "sim", "replay")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A negative price would settle every call as a refund and let the caps be crossed.
Rate = Annotated[Decimal, Field(ge=0, allow_inf_nan=False)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class EndpointModel(_Strict):
    """What one model costs on this endpoint, USD per million tokens (0 for a local server).
    Cache hits cost `cache_read_usd_per_mtok`, or the input price when it is not given."""

    input_usd_per_mtok: Rate
    output_usd_per_mtok: Rate
    cache_read_usd_per_mtok: Rate | None = None


class EndpointConfig(_Strict):
    """One OpenAI-compatible endpoint. Without `api_key_env` no key is sent (a local
    server); `concurrency` is its requests at once (else concurrency.providers' or 4)."""

    api: Literal["openai"]
    base_url: str
    api_key_env: str | None = None
    models: dict[str, EndpointModel] = {}
    concurrency: Annotated[int, Field(strict=True, ge=1, le=1024)] | None = None

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        fix = 'write e.g. "http://localhost:8000/v1"'
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018  # raises ValueError on a port that is not a number
        except ValueError:
            raise ValueError(f"base_url's port is not a number; {fix}") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url needs http:// or https:// and a host; {fix}")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _variable(cls, value: str | None) -> str | None:
        if value is not None and not _VARIABLE.fullmatch(value):
            raise ValueError(
                f"api_key_env names the environment variable holding the key (e.g. "
                f"OPENROUTER_API_KEY), not the key itself: {len(value)} characters that are "
                "not a variable name"
            )
        return value


def name_problem(name: str) -> str | None:
    """Why `name` cannot name an endpoint, or None."""
    if name in BUILTIN_PROVIDERS:
        return f"{name!r} is a built-in provider; give the endpoint another name"
    if not _NAME.fullmatch(name):
        return "an endpoint's name is letters, digits, '_', '.' or '-' (at most 64)"
    return None


def endpoint_prices(endpoints: dict[str, EndpointConfig]) -> dict[str, dict[str, Price]]:
    """Each endpoint's own model prices as price rows (no write charge, no batch tier)."""
    return {
        name: {
            model: Price(
                model=model,
                provider=name,
                input=row.input_usd_per_mtok,
                output=row.output_usd_per_mtok,
                cache_write=row.input_usd_per_mtok,
                cache_read=(
                    row.input_usd_per_mtok
                    if row.cache_read_usd_per_mtok is None
                    else row.cache_read_usd_per_mtok
                ),
            )
            for model, row in endpoint.models.items()
        }
        for name, endpoint in endpoints.items()
    }
