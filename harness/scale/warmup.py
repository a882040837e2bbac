"""What a worker's warm process loads once, so that no task's shard loads it again.

Imported by the warm process only (harness/scale/warm.py preloads it): importing this module
is the warm-up. It imports every module a shard would otherwise import on its own (the
runner, the test runner, the simulator), and fills the caches a shard would otherwise fill
in its first moments that hold for the machine and the code, never for a night: the shipped
simulator model and guardrails lists, and the sandbox probe (which starts an interpreter
inside bubblewrap). Nothing of a night (config, task list, prompts) is read here: each shard
checks those at its start. Warnings stay each shard's own: only a probe's answer is kept,
and `sandbox_kind` warns per run. The vendor SDKs are a live night's only:
harness/scale/warmup_vendors.py adds them for the warm process live tasks are forked from.

Last, everything loaded is moved out of the garbage collector's reach (`settle`): a shard's
collections then never walk the warm process's objects, which would copy every page of them
into the shard (about a sixth of a CPU second a task, measured).
"""

from __future__ import annotations

import gc
import importlib

from harness.guardrails import shipped_refused_go_packages, shipped_refused_js_modules
from harness.sim import SimModel
from harness.testrun import probe_sandbox

__all__ = ["MODULES", "settle"]

# What every task imports: the runner, the test runner, the simulator, and what a shard is
# forked and unpickled with.
MODULES = (
    "harness.runner",
    "harness.scale.shard",
    "harness.scale.warm",
    "harness.testrun",
    "harness.sim.provider",
)


def settle() -> None:
    """Collect once, then freeze what survives: the shards forked from here inherit it as
    permanent, so their own collections leave its pages shared (gc.freeze's purpose)."""
    gc.collect()
    gc.freeze()


for _name in MODULES:
    importlib.import_module(_name)
SimModel.shipped()
shipped_refused_js_modules()
shipped_refused_go_packages()
probe_sandbox()
settle()
