"""Router: step → route, with fix escalation."""

from __future__ import annotations

from harness.config import load_config
from harness.router import Router


def test_steps_follow_the_configured_tiers() -> None:
    """Write and fix go to mid, review to cheap, per the shipped defaults."""
    router = Router.from_config(load_config())

    assert router.route("write").tier == "mid"
    assert router.route("review").tier == "cheap"
    assert router.route("review").provider == "gemini"
    assert router.route("fix").provider == "anthropic"


def test_fix_escalates_after_one_non_improving_fix(tmp_path) -> None:
    """With escalation on (off by default), after a fix that did not improve, the next fix
    goes to the frontier tier."""
    path = tmp_path / "harness.yaml"
    path.write_text("loop: {escalate: true}\n")
    router = Router.from_config(load_config(path))

    assert router.route("fix", non_improving_fixes=0).tier == "mid"
    assert router.route("fix", non_improving_fixes=1).tier == "frontier"
    assert router.route("write", non_improving_fixes=3).tier == "mid"


def test_escalation_is_off_by_default() -> None:
    """With the shipped escalate: false the fix tier never changes."""
    router = Router.from_config(load_config())

    assert router.route("fix", non_improving_fixes=5).tier == "mid"


def test_provider_override_keeps_models() -> None:
    """The simulator takes every route but keeps each tier's model (and so its price)."""
    router = Router.from_config(load_config(), provider_override="sim")

    route = router.route("review")

    assert route.provider == "sim"
    assert route.model == load_config().routes["cheap"].model
