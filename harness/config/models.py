"""The operator's configuration as typed, validated values (what harness.yaml may say)."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from harness.budget import BudgetConfig
from harness.config.endpoints import EndpointConfig
from harness.llm import ServiceTier

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_USD",
    "STEPS",
    "BatchConfig",
    "ConfigError",
    "ContextToolsConfig",
    "DeliverConfig",
    "DifferentialConfig",
    "FixFailures",
    "FixFormat",
    "GitDeliverConfig",
    "HarnessConfig",
    "JudgeConfig",
    "LoopConfig",
    "RouteConfig",
    "ScaleConfig",
    "TemporalConfig",
]

STEPS = ("write", "review", "rewrite", "fix")


class ConfigError(ValueError):
    """The operator's configuration is invalid; the message says where and what to change."""


MAX_CONFIG_BYTES = 2**20
MAX_USD = Decimal(1_000_000)  # a cap above this is a typo, not a budget
# Strict numbers: `true` is not 1, `5.0` is not 5, and .inf / .nan are refused (allow_inf_nan).
Count = Annotated[int, Field(strict=True, ge=1, le=1024)]
Small = Annotated[int, Field(strict=True, ge=1, le=50)]
MAX_SLICE_TASKS = 1000
Seconds = Annotated[float, Field(strict=True, gt=0, le=86_400)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class RouteConfig(_Strict):
    provider: str
    model: str
    max_tokens: int = Field(strict=True, gt=0, le=1_000_000)
    service_tier: ServiceTier = ServiceTier.STANDARD  # flex: Gemini Flex, half price, sheddable

    @model_validator(mode="after")
    def _tier_offered(self) -> RouteConfig:
        if self.service_tier is ServiceTier.BATCH:
            raise ValueError(
                "service_tier: batch is not a route option; the night's batch is set under "
                "batch: (use standard or flex here)"
            )
        if self.service_tier is ServiceTier.FLEX and self.provider != "gemini":
            raise ValueError(
                f"service_tier: flex is offered only by gemini (Gemini Flex), not by "
                f"{self.provider}; remove service_tier: flex or route the tier to a gemini model"
            )
        return self


class FixFailures(StrEnum):
    """What a fix prompt shows of the best candidate's test run."""

    FOCUSED = "focused"  # the failing tests only, each with its message and traceback
    FULL = "full"  # every visible test's outcome, passing ones too, as the published loop did


class FixFormat(StrEnum):
    """How a fix reply may give its change."""

    EDITS = "edits"  # SEARCH/REPLACE blocks against the best code (whole file as fallback)
    WHOLE = "whole"  # the complete file, always


class ContextToolsConfig(_Strict):
    """`loop.context_tools`: read-only tools a write or fix step may call (see
    docs/context-and-judge.md)."""

    enabled: bool = Field(strict=True)
    rounds: Annotated[int, Field(strict=True, ge=1, le=10)]  # calls per step; the last answers
    calls_per_round: Small
    result_bytes: Annotated[int, Field(strict=True, ge=256, le=2**20)]
    step_bytes: Annotated[int, Field(strict=True, ge=256, le=2**24)]
    task_bytes: Annotated[int, Field(strict=True, ge=256, le=2**26)]


class JudgeConfig(_Strict):
    """`loop.judge`: a gated, cheap principle judge of a candidate that already passes its
    visible tests (see docs/context-and-judge.md). It never changes a status."""

    enabled: bool = Field(strict=True)
    tier: str  # a tier under routes:, preferably another vendor than the writer's
    max_tokens: Annotated[int, Field(strict=True, ge=256, le=1_000_000)]  # the verdict's cap
    # Principle numbers whose flags reach the summary's "Needs a human"; every other flag is
    # logged (the `judge` event), not shown. Add one only once the bench shows it precise.
    shown: tuple[Annotated[int, Field(strict=True, ge=1, le=99)], ...]


class LoopConfig(_Strict):
    stop_after_no_improvement: Small
    escalate: bool = Field(strict=True)
    escalate_after: Small
    escalate_to: str
    review: bool = Field(strict=True)  # review (and rewrite) attempt 1's draft
    fix_failures: FixFailures
    fix_format: FixFormat
    context_tools: ContextToolsConfig
    judge: JudgeConfig


class ConcurrencyConfig(_Strict):
    tasks: Annotated[int, Field(strict=True, ge=1, le=256)]
    providers: dict[str, Count]
    tests: Count | None  # test runs at once; null = CPU count


class TestsConfig(_Strict):
    __test__ = False

    timeout_s: Seconds
    per_test_timeout_s: Seconds
    sandbox: Literal["auto", "bwrap", "none"]


class DifferentialConfig(_Strict):
    """The candidate checked call by call against its reference (docs/differential.md)."""

    enabled: bool | None = Field(strict=True)  # null: on for module_port tasks
    examples: Annotated[int, Field(strict=True, ge=1, le=100_000)]  # per public function
    seconds: Seconds  # per task, observed and generated calls together
    required: bool = Field(strict=True)  # a task passes only if it also agrees
    ignore: list[Annotated[str, Field(min_length=1, max_length=200)]]  # fnmatch patterns
    messages: bool = Field(strict=True)  # an exception's text must match, not only its class
    seed: int = Field(strict=True, ge=0, le=2**32 - 1)  # of the generated calls: they repeat


class MetricsConfig(_Strict):
    path: Path | None  # a .prom file in node_exporter's textfile directory
    labels: dict[str, str]

    @field_validator("path")
    @classmethod
    def _a_file(cls, value: Path | None) -> Path | None:
        if value is not None and value.is_dir():
            raise ValueError(f"{value} is a directory; name the .prom file in it")
        if value is not None and not value.parent.is_dir():  # never made: it may be at "/"
            raise ValueError(
                f"{value}: its folder {value.parent} does not exist; create it (node_exporter's "
                "textfile directory) or fix the path"
            )
        return value


class GitDeliverConfig(_Strict):
    """Commit each shipped output (or the night's) to `branch` through a worktree of its own."""

    branch: str = "harness/{run_id}"  # {run_id} is the only placeholder
    per: Literal["task", "night"] = "task"

    @field_validator("branch")
    @classmethod
    def _template(cls, value: str) -> str:
        try:
            value.format(run_id="r")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(
                f"{value!r}: the only placeholder is {{run_id}} (got {exc!s}); "
                'e.g. "harness/{run_id}"'
            ) from None
        return value


class DeliverConfig(_Strict):
    git: GitDeliverConfig | None  # off unless configured


_DURATION = re.compile(r"^(\d+)(s|m|h)$")
_CLOCK = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600}


class BatchConfig(_Strict):
    """Steps through the vendors' batch APIs (half price, hours of latency): attempt 1's
    writes alone (`steps: [write]`), or every listed step in rounds."""

    enabled: bool = Field(strict=True)
    # [write]: attempt 1's writes in one batch at the start; any other step listed: every
    # listed step in rounds (harness/runner/batch/rounds.py)
    steps: tuple[Literal["write", "review", "rewrite", "fix"], ...]
    # a round goes once every running task waits, or when its oldest request waited this long
    round_window_s: Seconds
    deadline: str  # "05:30": next local occurrence; "90s", "45m", "2h": from the start
    poll_s: Seconds
    max_poll_s: Seconds

    @field_validator("deadline")
    @classmethod
    def _deadline(cls, value: str) -> str:
        if not (_DURATION.match(value) or _CLOCK.match(value)):
            raise ValueError(
                f'deadline {value!r} is neither a clock time like "05:30" nor a duration '
                'like "90s", "45m" or "2h"; write one of those'
            )
        return value

    @property
    def in_rounds(self) -> bool:
        """Whether the listed steps go in rounds (any step but attempt 1's write listed)."""
        return self.enabled and any(step != "write" for step in self.steps)

    def deadline_at(self, start: dt.datetime) -> dt.datetime:
        """When the batch must have ended: a duration from `start` (aware), or the next
        occurrence of the clock time in local time at or after `start`."""
        if m := _DURATION.match(self.deadline):
            return start + dt.timedelta(seconds=int(m[1]) * _UNIT_S[m[2]])
        m = _CLOCK.match(self.deadline)
        assert m is not None  # validated
        local = start.astimezone()
        at = local.replace(hour=int(m[1]), minute=int(m[2]), second=0, microsecond=0)
        return at if at > local else at + dt.timedelta(days=1)


class TemporalTLS(_Strict):
    """TLS to the Temporal frontend (docs/scale.md, "Temporal Cloud and TLS"): the server's
    CA and name to check it by, and this process's client certificate and key (mTLS)."""

    enabled: bool
    server_ca: Path | None  # PEM; null: the system's roots
    server_name: str | None  # the name its certificate carries; null: the address's host
    client_cert: Path | None  # PEM, with client_key, for a server that asks for one
    client_key: Path | None

    @model_validator(mode="after")
    def _pair(self) -> TemporalTLS:
        if (self.client_cert is None) != (self.client_key is None):
            raise ValueError("client_cert and client_key go together: set both (mTLS) or neither")
        return self


class TemporalConfig(_Strict):
    """Where a distributed night's Temporal service is (docs/scale.md)."""

    address: str = Field(min_length=1)  # host:port of the frontend
    namespace: str = Field(min_length=1)
    task_queue: str = Field(min_length=1)
    heartbeat_s: Seconds  # a worker silent this long is dead: its task goes to another
    slice_tasks: int  # tasks per child workflow (docs/scale.md)
    tls: TemporalTLS
    api_key_env: str | None = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")  # the key's variable

    @field_validator("slice_tasks", mode="before")
    @classmethod
    def _slice(cls, value: object) -> object:
        if type(value) is not int or not 1 <= value <= MAX_SLICE_TASKS:
            raise ValueError(
                f"slice_tasks {value!r}: write a whole number from 1 to {MAX_SLICE_TASKS} (a "
                "slice's history grows by about six events a task; Temporal warns at 10,000)"
            )
        return value

    @field_validator("address")
    @classmethod
    def _host_port(cls, value: str) -> str:
        host, _, port = value.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f'address {value!r} is not host:port; write e.g. "localhost:7233"')
        return value


class ScaleConfig(_Strict):
    """One machine (`local`, today's thread pool) or many workers on Temporal."""

    engine: Literal["local", "temporal"]
    temporal: TemporalConfig
    database: str | None  # the workers' shared budget ledger; null = none (one machine)
    patience_s: Seconds  # an outage of Temporal or the database waited out this long, then halt

    @field_validator("database")
    @classmethod
    def _postgres(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError(
                f"database {value!r} is not a PostgreSQL URL; write "
                '"postgresql://user@host/harness" (or null for one machine)'
            )
        return value


class HarnessConfig(_Strict):
    """The whole configuration; build it with `load_config`, which also checks the tiers.

    No field has a default here: every default lives in harness/data/defaults.yaml, which
    `load_config` always reads first (a test keeps it so). Only the fields of a section that
    is off by default (deliver.git) keep theirs, as the shipped file cannot hold them."""

    routes: dict[str, RouteConfig]
    endpoints: dict[str, EndpointConfig]  # named OpenAI-compatible servers a route may name
    steps: dict[str, str]
    step_max_tokens: dict[str, int]  # step → output cap; the route's max_tokens still caps
    loop: LoopConfig
    # Mark each task's stable prefix for the provider's prompt cache (Anthropic: a cache
    # breakpoint; Gemini caches implicitly whatever this says).
    prompt_cache: bool = Field(strict=True)
    concurrency: ConcurrencyConfig
    tests: TestsConfig
    differential: DifferentialConfig
    provider_timeout_s: Seconds
    prices: Path | None
    budget: BudgetConfig
    metrics: MetricsConfig
    deliver: DeliverConfig
    batch: BatchConfig
    scale: ScaleConfig

    @property
    def provider_limits(self) -> dict[str, int]:
        """Requests at once per provider: `concurrency.providers`, and each endpoint's own
        `concurrency` where it sets one."""
        own = {n: e.concurrency for n, e in self.endpoints.items() if e.concurrency is not None}
        return {**self.concurrency.providers, **own}

    @model_validator(mode="after")
    def _rounds_run_locally(self) -> HarnessConfig:
        if self.batch.in_rounds and self.scale.engine != "local":
            raise ValueError(
                f"batch.steps {list(self.batch.steps)} batches steps in rounds, which run on "
                "the local engine only; on scale.engine: temporal use batch.steps: [write]"
            )
        return self
