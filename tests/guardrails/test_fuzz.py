"""Fuzzing the guardrails: any input gives an answer, never an exception; quoting never hides."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.guardrails import Policy, load_policy

FUZZ = settings(max_examples=300, deadline=None)
shellish = st.text(alphabet=st.sampled_from(list("gitpush -f'\"\\$(){};|&<>`#\n\t=*+.,/~")))


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Policy:
    return load_policy(None, task_list_dir=tmp_path_factory.mktemp("tasks"))


@FUZZ
@given(text=st.one_of(st.text(), shellish))
def test_any_command_text_is_answered(policy: Policy, text: str) -> None:
    """Arbitrary shell text yields a Violation or None, never an exception."""
    policy.check_command(text)
    policy.check_command(text.split())


@FUZZ
@given(code=st.one_of(st.text(), shellish))
def test_any_code_is_answered(policy: Policy, code: str) -> None:
    """Arbitrary source yields a list of violations and warnings, never an exception."""
    assert isinstance(policy.check_code(code), list)
    assert isinstance(policy.scar_tissue(code), list)


@FUZZ
@given(path=st.text(alphabet=st.sampled_from(list("ab./~-_ ")), min_size=1))
def test_any_path_is_answered(policy: Policy, path: str) -> None:
    """Arbitrary relative or absolute paths are answered, never raised on."""
    policy.check_write(Path(path))


@FUZZ
@given(
    words=st.permutations(["origin", "main", "-f", "-u"]),
    quote=st.sampled_from([shlex.quote, lambda w: f'"{w}"', lambda w: f"'{w}'", str]),
    spaces=st.integers(min_value=1, max_value=4),
    prefix=st.sampled_from(["", "FOO=1 ", "env A=b ", "sudo ", "nohup ", "/usr/bin/"]),
)
def test_force_push_is_caught_in_any_order_and_quoting(
    policy: Policy, words: list[str], quote: object, spaces: int, prefix: str
) -> None:
    """Reordered, requoted, respaced and prefixed, a force push is still a force push."""
    sep = " " * spaces
    cmd = prefix + sep.join(quote(w) for w in ["git", "push", *words])  # type: ignore[operator]
    violation = policy.check_command(cmd)

    assert violation is not None
    assert violation.rule == "git-force-push"
