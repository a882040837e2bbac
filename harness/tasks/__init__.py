"""Load and validate a task list; every error names file, line, task id, field and the fix."""

from __future__ import annotations

from harness.tasks._digest import inputs_digest
from harness.tasks._edit import add_task
from harness.tasks._load import TaskListError, load_tasks

__all__ = ['TaskListError', 'add_task', 'inputs_digest', 'load_tasks']
