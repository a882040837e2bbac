"""Operator configuration: shipped defaults, merged with the operator's harness.yaml."""

from __future__ import annotations

from harness.config.load import check_prices, load_config
from harness.config.models import (
    MAX_USD,
    STEPS,
    BatchConfig,
    ConfigError,
    DeliverConfig,
    FixFailures,
    FixFormat,
    GitDeliverConfig,
    HarnessConfig,
    JudgeConfig,
    LoopConfig,
    RouteConfig,
    ScaleConfig,
    TemporalConfig,
)

__all__ = [
    "MAX_USD",
    "STEPS",
    "BatchConfig",
    "ConfigError",
    "DeliverConfig",
    "FixFailures",
    "FixFormat",
    "GitDeliverConfig",
    "HarnessConfig",
    "JudgeConfig",
    "LoopConfig",
    "RouteConfig",
    "ScaleConfig",
    "TemporalConfig",
    "check_prices",
    "load_config",
]
