"""The per-task attempt loop, readable top to bottom: write → review → rewrite, then fixes."""

from __future__ import annotations

from harness.pipeline.env import TaskFault
from harness.pipeline.first import first_write
from harness.pipeline.task import Prior, TaskEnv, run_task

__all__ = ["Prior", "TaskEnv", "TaskFault", "first_write", "run_task"]
