"""Attempt 1's write request, built exactly as the loop builds it: the batch phase submits
this very request, so its reply is the one the loop's write call finds recorded."""

from __future__ import annotations

from typing import Any

from harness.extract import required_names_from_tests
from harness.llm import CallRequest
from harness.pipeline.env import TaskEnv
from harness.prompts import task_context
from harness.tasks import TaskSpec

__all__ = ["first_write", "task_inputs"]


def task_inputs(spec: TaskSpec) -> tuple[dict[str, Any], frozenset[str]]:
    """The task's stable template variables and the names its tests require."""
    sources = [p.read_text() for p in spec.tests]
    required = frozenset(
        required_names_from_tests(sources, spec.module_name, spec.language, spec.output_rel)
    )
    return task_context(spec, tuple(sorted(required))), required


def first_write(spec: TaskSpec, env: TaskEnv) -> CallRequest:
    """The write request of attempt 1, as `TaskState.call("write", 1, {})` sends it."""
    context, _ = task_inputs(spec)
    routes = env.router.choices("write", 0)
    prompt = env.prompts[spec.type].render("write", context)
    return CallRequest(routes[0], prompt, spec.id, "write", 1, routes[1:])
