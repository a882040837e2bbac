"""The warm-up of the warm process a live night's tasks are forked from: the plain warm-up
(harness/scale/warmup.py) and the vendor SDKs, through their adapters (harness.providers
imports them on demand). A worker starts this warm process the first time it takes a live
task, so a worker that serves only simulated or replayed nights never imports an SDK."""

from __future__ import annotations

import importlib

from harness.scale.warmup import settle

__all__ = ["MODULES"]

MODULES = (
    "harness.providers.anthropic",
    "harness.providers.anthropic_batch",
    "harness.providers.gemini",
    "harness.providers.gemini_batch",
)

for _name in MODULES:
    importlib.import_module(_name)
settle()
