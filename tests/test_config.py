"""Operator config: shipped defaults, overrides, start-up checks."""

from __future__ import annotations

import datetime as dt

import pytest

from harness.config import ConfigError, check_prices, load_config


def test_override_merges_key_by_key(tmp_path) -> None:
    """An operator file changes only what it names."""
    path = tmp_path / "harness.yaml"
    path.write_text(
        "routes:\n  mid: {provider: anthropic, model: claude-opus-4-6, max_tokens: 100}\n"
    )

    config = load_config(path)

    assert config.routes["mid"].model == "claude-opus-4-6"
    assert config.routes["cheap"].provider == "gemini"
    assert config.loop.stop_after_no_improvement == 2


def test_unknown_key_is_an_error(tmp_path) -> None:
    """A typo in harness.yaml names the key."""
    path = tmp_path / "harness.yaml"
    path.write_text("loop: {stop_after_no_improvment: 3}\n")

    with pytest.raises(ConfigError, match=r"loop\.stop_after_no_improvment"):
        load_config(path)


def test_step_pointing_at_a_missing_tier_is_an_error(tmp_path) -> None:
    """Every step's tier needs a route."""
    path = tmp_path / "harness.yaml"
    path.write_text("steps: {review: budget}\n")

    with pytest.raises(ConfigError, match="tier\\(s\\) budget have no route"):
        load_config(path)


def test_a_route_whose_model_has_no_price_is_a_start_up_error(tmp_path) -> None:
    """Never a silent $0: an unpriced model stops the run before it starts."""
    path = tmp_path / "harness.yaml"
    path.write_text("routes:\n  cheap: {provider: gemini, model: gemini-9-ultra, max_tokens: 10}\n")

    with pytest.raises(ConfigError, match="route 'cheap': model 'gemini-9-ultra' has no price"):
        check_prices(load_config(path))


def test_shipped_routes_are_priced_and_not_retiring_soon() -> None:
    """The shipped defaults name priced models that are not past their retirement date."""
    config = load_config()
    table = check_prices(config)

    for route in config.routes.values():
        retires = table.get(route.model).retires
        assert retires is None or retires > table.checked


def test_a_route_to_a_retired_model_is_a_start_up_error(tmp_path) -> None:
    """A model past its announced retirement date is refused before anything is spent."""
    path = tmp_path / "harness.yaml"
    path.write_text(
        "routes:\n  mid: {provider: anthropic, model: claude-sonnet-4-5, max_tokens: 10}\n"
    )
    config = load_config(path)

    with pytest.raises(ConfigError, match="model 'claude-sonnet-4-5' retired on 2026-11-30"):
        check_prices(config, today=dt.date(2026, 12, 1))
    assert check_prices(config, today=dt.date(2026, 11, 29))


def test_a_step_output_cap_must_name_a_step_and_a_positive_count(tmp_path) -> None:
    """step_max_tokens keys are steps, values positive; the error names what to change."""
    path = tmp_path / "harness.yaml"
    path.write_text("step_max_tokens: {reveiw: 100, fix: 0}\n")

    with pytest.raises(ConfigError) as caught:
        load_config(path)

    assert "step_max_tokens: fix, reveiw" in str(caught.value)
