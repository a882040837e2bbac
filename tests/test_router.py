"""Router: step → route, with fix escalation."""

from __future__ import annotations

import pytest

from harness.config import ConfigError, load_config
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


def test_an_escalated_fix_may_fall_back_to_its_own_tier(tmp_path) -> None:
    """With escalation on, an escalated fix offers the frontier route first, then the fix
    step's own mid route."""
    path = tmp_path / "harness.yaml"
    path.write_text("loop: {escalate: true}\n")
    router = Router.from_config(load_config(path))

    assert [r.tier for r in router.choices("fix", non_improving_fixes=1)] == ["frontier", "mid"]
    assert [r.tier for r in router.choices("fix", non_improving_fixes=0)] == ["mid"]
    assert [r.tier for r in router.choices("write", non_improving_fixes=3)] == ["mid"]


def test_a_step_output_cap_lowers_max_tokens_and_a_cap_above_the_route_is_refused(tmp_path) -> None:
    """The shipped review reserves 4096 output tokens, not the cheap route's 16384; a step cap
    lowers every route the step may take (the escalated frontier too); a cap above the step's
    own route is refused at load, as it could never apply."""
    path = tmp_path / "harness.yaml"
    path.write_text("step_max_tokens: {write: 8000, fix: 32000}\nloop: {escalate: true}\n")
    router = Router.from_config(load_config(path))
    too_high = tmp_path / "high.yaml"
    too_high.write_text("step_max_tokens: {fix: 100000}\n")

    assert router.route("review").max_tokens == 4096
    assert router.route("write").max_tokens == 8000
    assert [r.max_tokens for r in router.choices("fix", 1)] == [32000, 32000]
    with pytest.raises(ConfigError, match=r"step_max_tokens\.fix: 100000 is above"):
        load_config(too_high)


def test_prompt_cache_is_on_for_every_route_by_default() -> None:
    """The shipped defaults mark the stable prefix for caching on every route."""
    router = Router.from_config(load_config(), provider_override="sim")

    assert all(router.route(step).prompt_cache for step in ("write", "review", "fix"))


def test_prompt_cache_off_uncaches_the_routes_that_cache_on_request(tmp_path) -> None:
    """`prompt_cache: false` turns caching off on the Anthropic routes; the Gemini route keeps
    it, as Gemini caches an identical prefix on its own (and the simulator bills it so)."""
    path = tmp_path / "harness.yaml"
    path.write_text("prompt_cache: false\n")

    for override in (None, "sim"):
        router = Router.from_config(load_config(path), provider_override=override)
        assert (router.route("write").prompt_cache, router.route("fix").prompt_cache) == (
            False,
            False,
        )
        assert router.route("review").prompt_cache is True
