"""What a worker's warm process loads once, so that no task's shard loads it again.

Imported by the warm process only (harness/scale/warm.py preloads it): importing this module
is the warm-up. It imports every module a shard would otherwise import on its own (the
runner, the test runner, the simulator, the vendor SDKs through their adapters), and fills
the caches a shard would otherwise fill in its first moments that hold for the machine and
the code, never for a night: the shipped simulator model and guardrails lists, and the
sandbox probe (which starts an interpreter inside bubblewrap). Nothing of a night (config,
task list, prompts) is read here: each shard checks those at its start. Warnings stay each
shard's own: only a probe's answer is kept, and `sandbox_kind` warns per run.
"""

from __future__ import annotations

import importlib

from harness.guardrails import shipped_refused_go_packages, shipped_refused_js_modules
from harness.sim import SimModel
from harness.testrun import probe_sandbox

__all__ = ["MODULES"]

# What every task imports: the runner (through the shard), the test runner, the simulator
# and the vendor SDKs (through their adapters, which harness.providers imports on demand).
MODULES = (
    "harness.scale.shard",
    "harness.testrun",
    "harness.sim.provider",
    "harness.providers.anthropic",
    "harness.providers.anthropic_batch",
    "harness.providers.gemini",
    "harness.providers.gemini_batch",
)

for _name in MODULES:
    importlib.import_module(_name)
SimModel.shipped()
shipped_refused_js_modules()
shipped_refused_go_packages()
probe_sandbox()
