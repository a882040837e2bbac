"""`loop.judge`: off by default, validated with the line and what to change."""

from __future__ import annotations

import pytest

from harness.config import ConfigError, load_config
from harness.router import Router


def test_the_judge_is_off_by_default_on_the_cheap_tier() -> None:
    """Shipped: off, cheap tier (another vendor than the writer), nothing shown."""
    config = load_config()
    judge = config.loop.judge

    assert (judge.enabled, judge.tier, judge.shown) == (False, "cheap", ())
    assert config.routes[judge.tier].provider != config.routes[config.steps["write"]].provider


def test_the_judge_route_is_its_tier_capped_at_its_max_tokens() -> None:
    """The router sends the judge to its tier with its own, smaller output cap."""
    config = load_config()

    route = Router.from_config(config).judge_route()

    assert (route.tier, route.max_tokens) == ("cheap", config.loop.judge.max_tokens)


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("loop: {judge: {tier: cheapest}}", "loop.judge.tier: tier 'cheapest' has no route"),
        ("loop: {judge: {enabled: 1}}", "loop.judge.enabled"),
        ("loop: {judge: {shown: [true]}}", "loop.judge.shown[0]"),
        ("loop: {judge: {shown: [0]}}", "loop.judge.shown[0]"),
        ("loop: {judge: {max_tokens: 10}}", "loop.judge.max_tokens"),
        ("loop: {judge: {enable: true}}", "loop.judge.enable: unknown key"),
    ],
)
def test_a_bad_judge_setting_names_its_line(tmp_path, text: str, what: str) -> None:
    """A tier without a route, a non-boolean switch, a principle that is not a number from 1,
    a tiny output cap, a typo: each a config error at line 1 saying which key."""
    path = tmp_path / "harness.yaml"
    path.write_text(text + "\n")

    with pytest.raises(ConfigError) as info:
        load_config(path)

    assert f"{path}:1: {what}" in str(info.value)
