"""Load and validate a task list; every error names file, line, task id, field and the fix.

Also the one safe way to read a YAML input file (`read_yaml`), which config and policy share.
"""

from __future__ import annotations

from harness.tasks.spec import TaskSpec
from harness.tasks.digest import inputs_digest
from harness.tasks.edit import add_task
from harness.tasks.load import (
    MAX_TASK_LIST_BYTES,
    Problem,
    TaskListError,
    declared_read_roots,
    load_tasks,
)
from harness.tasks.withheld import withheld_by_lists
from harness.tasks.yamlfile import YamlDoc, YamlError, read_yaml

__all__ = [
    "MAX_TASK_LIST_BYTES",
    "Problem",
    "TaskListError",
    "TaskSpec",
    "YamlDoc",
    "YamlError",
    "add_task",
    "declared_read_roots",
    "inputs_digest",
    "load_tasks",
    "read_yaml",
    "withheld_by_lists",
]
