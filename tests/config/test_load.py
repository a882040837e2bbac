"""Operator config: shipped defaults, overrides, start-up checks."""

from __future__ import annotations

import datetime as dt
from importlib import resources

import pytest
import yaml
from pydantic import BaseModel

from harness.config import ConfigError, HarnessConfig, check_prices, load_config
from harness.llm import ServiceTier
from harness.router import Router


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


@pytest.mark.parametrize(
    ("step", "hint"),
    [("fixx", "did you mean 'fix'?"), ("Write", "did you mean 'write'?"), ("polish", "the steps")],
)
def test_an_unknown_step_is_an_error_not_ignored(tmp_path, step: str, hint: str) -> None:
    """`steps: {fixx: frontier}` would leave fix on its default tier without a word."""
    path = tmp_path / "harness.yaml"
    path.write_text(f"# routes\nsteps: {{{step}: frontier}}\n")

    with pytest.raises(ConfigError) as caught:
        load_config(path)

    assert f"harness.yaml:2: steps.{step}: unknown step" in str(caught.value)
    assert hint in str(caught.value)


def test_step_pointing_at_a_missing_tier_is_an_error(tmp_path) -> None:
    """Every step's tier needs a route."""
    path = tmp_path / "harness.yaml"
    path.write_text("steps: {review: budget}\n")

    with pytest.raises(ConfigError, match=r"harness\.yaml:1: steps\.review: tier 'budget' has no"):
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


def test_every_config_problem_is_reported_at_once_with_its_line(tmp_path) -> None:
    """Typos, non-finite and out-of-range numbers and duplicate keys: one error, by line."""
    path = tmp_path / "harness.yaml"
    path.write_text(
        "tests:\n"
        "  timeout_s: .inf\n"
        "  per_test_timeout_s: true\n"
        "concurrency: {tasks: 100000000000000000000}\n"
        "loop: {stop_after_no_improvment: 3}\n"
        "budget: {daily_cap_usd: 1e400}\n"
        "concurrency: {tasks: 2}\n"
    )

    with pytest.raises(ConfigError) as info:
        load_config(path)

    assert str(info.value).splitlines()[1:] == [
        f"  {path}:2: tests.timeout_s: must be a finite number (got inf)",
        f"  {path}:3: tests.per_test_timeout_s: expected a number (got True)",
        f"  {path}:5: loop.stop_after_no_improvment: unknown key; "
        "did you mean 'stop_after_no_improvement'?",
        f"  {path}:6: budget.daily_cap_usd: 1e400 is more than 1,000,000 USD; "
        "write the cap you mean",
        f"  {path}:7: concurrency: duplicate key 'concurrency' (first on line 4); YAML would "
        "keep only this one and silently drop the first: merge them or remove one",
    ]


def test_a_ledger_path_that_is_a_directory_is_a_config_error(tmp_path) -> None:
    """The day ledger must be a file: a folder is refused when the config is read."""
    path = tmp_path / "harness.yaml"
    path.write_text(f"budget: {{ledger_path: {tmp_path}}}\n")

    with pytest.raises(ConfigError, match=r"budget\.ledger_path: .* is a directory; name the"):
        load_config(path)


def test_whole_numbers_and_seconds_are_strict(tmp_path) -> None:
    """`5.0` is not a count and `true` is not one second; plain ints and floats still work."""
    path = tmp_path / "harness.yaml"
    path.write_text("concurrency: {tasks: 2}\ntests: {timeout_s: 90, per_test_timeout_s: 2.5}\n")

    config = load_config(path)

    assert (config.concurrency.tasks, config.tests.timeout_s) == (2, 90.0)
    path.write_text("concurrency: {tasks: 2.0}\n")
    with pytest.raises(ConfigError, match=r"concurrency\.tasks: expected a whole number"):
        load_config(path)


def test_a_step_output_cap_must_name_a_step_and_a_positive_count(tmp_path) -> None:
    """step_max_tokens keys are steps, values positive; the error names what to change."""
    path = tmp_path / "harness.yaml"
    path.write_text("step_max_tokens: {reveiw: 100, fix: 0}\n")

    with pytest.raises(ConfigError) as caught:
        load_config(path)

    message = str(caught.value)
    assert (
        "step_max_tokens.reveiw: name a step" in message,
        "step_max_tokens.fix:" in message,
    ) == (
        True,
        True,
    )


def test_the_night_goes_in_batch_rounds_until_stop_by_morning_by_default() -> None:
    """The shipped config batches every paid step in rounds until the next 06:00."""
    batch = load_config().batch

    assert (batch.in_rounds, batch.steps, batch.deadline) == (
        True,
        ("write", "review", "rewrite", "fix"),
        "06:00",
    )


def test_the_shipped_batch_rounds_do_not_apply_to_a_temporal_night(tmp_path) -> None:
    """Rounds run locally: on Temporal batch mode stays off unless the file turns it on,
    and then batches attempt 1's writes unless it names its steps."""
    path = tmp_path / "harness.yaml"
    path.write_text("scale: {engine: temporal}\n")
    plain = load_config(path).batch
    path.write_text("scale: {engine: temporal}\nbatch: {enabled: true}\n")
    on = load_config(path).batch

    assert ((plain.enabled, plain.steps), (on.enabled, on.steps)) == (
        (False, ("write",)),
        (True, ("write",)),
    )


@pytest.mark.parametrize("bad", ["5:30pm", "90", "2d", "25:00", ""])
def test_a_batch_deadline_that_is_neither_clock_nor_duration_says_what_to_write(
    tmp_path, bad
) -> None:
    """The error names file, line and key, and shows both accepted forms."""
    path = tmp_path / "harness.yaml"
    path.write_text(f'batch:\n  enabled: true\n  deadline: "{bad}"\n')

    with pytest.raises(ConfigError, match=r'harness\.yaml:3: batch\.deadline: .*"05:30".*"2h"'):
        load_config(path)


def test_a_batch_step_that_is_no_loop_step_is_refused(tmp_path) -> None:
    """Only the loop's paid steps (write, review, rewrite, fix) can be batched."""
    path = tmp_path / "harness.yaml"
    path.write_text("batch: {enabled: true, steps: [judge]}\n")

    with pytest.raises(ConfigError, match=r"batch\.steps\[0\]"):
        load_config(path)


def test_batch_rounds_on_temporal_are_refused(tmp_path) -> None:
    """Steps beyond the first write go in rounds, which the Temporal engine does not run."""
    path = tmp_path / "harness.yaml"
    path.write_text("batch: {enabled: true, steps: [write, fix]}\nscale: {engine: temporal}\n")

    with pytest.raises(ConfigError, match=r"local engine only"):
        load_config(path)


def test_batch_deadline_is_a_duration_from_the_start_or_the_next_clock_time(tmp_path) -> None:
    """ "90s" counts from the run's start; "05:30" is its next local occurrence, maybe tomorrow."""
    path = tmp_path / "harness.yaml"
    start = dt.datetime(2026, 11, 23, 22, 0).astimezone()
    path.write_text('batch: {deadline: "90s"}\n')
    duration = load_config(path).batch.deadline_at(start)
    path.write_text('batch: {deadline: "05:30"}\n')
    clock = load_config(path).batch.deadline_at(start)
    path.write_text('batch: {deadline: "23:15"}\n')
    tonight = load_config(path).batch.deadline_at(start)

    assert duration - start == dt.timedelta(seconds=90)
    assert (clock.date(), clock.hour, clock.minute) == (dt.date(2026, 11, 24), 5, 30)
    assert (tonight.date(), tonight.hour, tonight.minute) == (dt.date(2026, 11, 23), 23, 15)


def test_a_flex_route_to_anthropic_is_an_error_naming_its_line(tmp_path) -> None:
    """Flex is a Gemini tier: an Anthropic route asking for it is refused with what to change."""
    path = tmp_path / "harness.yaml"
    path.write_text(
        "routes:\n"
        "  mid: {provider: anthropic, model: claude-sonnet-5-5, max_tokens: 100,"
        " service_tier: flex}\n"
    )

    with pytest.raises(ConfigError, match=r"harness\.yaml:2: routes\.mid: .*flex is offered only"):
        load_config(path)


def test_a_flex_route_to_gemini_reaches_the_router(tmp_path) -> None:
    """A gemini route with service_tier: flex is priced at start-up and routed as FLEX."""
    path = tmp_path / "harness.yaml"
    path.write_text(
        "routes:\n"
        "  cheap: {provider: gemini, model: gemini-3.8-flash, max_tokens: 100,"
        " service_tier: flex}\n"
    )
    config = load_config(path)
    check_prices(config)

    routes = Router.from_config(config).routes

    assert (
        routes["cheap"].service_tier,
        routes["mid"].service_tier,
    ) == (ServiceTier.FLEX, ServiceTier.STANDARD)


@pytest.mark.parametrize("value", ['"no"', "0", "off-ish"])
def test_prompt_cache_takes_only_true_or_false(tmp_path, value: str) -> None:
    """`prompt_cache` is a yes/no switch: anything but true or false names its line."""
    path = tmp_path / "harness.yaml"
    path.write_text(f"loop: {{review: true}}\nprompt_cache: {value}\n")

    assert load_config().prompt_cache is True
    with pytest.raises(ConfigError, match=r"harness\.yaml:2: prompt_cache: "):
        load_config(path)


def _defaults_in_code(model: type, shipped: dict, where: str = "") -> list[str]:
    """Fields of `model` that hold a default in code, or are missing from the shipped file."""
    found = []
    for name, info in model.model_fields.items():
        key = f"{where}{name}"
        if name not in shipped:
            found.append(f"{key}: not in defaults.yaml")
        elif not info.is_required():
            found.append(f"{key}: has a default in code too")
        sub = info.annotation
        if (
            isinstance(shipped.get(name), dict)
            and isinstance(sub, type)
            and issubclass(sub, BaseModel)
        ):
            found += _defaults_in_code(sub, shipped[name], f"{key}.")
    return found


def test_every_default_lives_only_in_the_shipped_defaults_file() -> None:
    """Each config key has its default in harness/data/defaults.yaml and none in the models,
    so the two can never disagree (as loop.escalate once did)."""
    text = resources.files("harness.data").joinpath("defaults.yaml").read_text()

    assert _defaults_in_code(HarnessConfig, yaml.safe_load(text)) == []


def test_scale_defaults_to_the_local_pool() -> None:
    """With no `scale:` section a night runs on this machine's pool, with no database."""
    scale = load_config().scale

    assert (scale.engine, scale.database) == ("local", None)


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("scale: {engine: kubernetes}", r"scale\.engine"),
        ("scale: {temporal: {address: localhost}}", r"host:port"),
        ("scale: {database: 'sqlite:///x.db'}", r"PostgreSQL URL"),
        ("scale: {temporal: {queue: x}}", r"scale\.temporal\.queue"),
        ("scale: {temporal: {slice_tasks: 0}}", r"slice_tasks 0: write a whole number from 1"),
        ("scale: {temporal: {slice_tasks: 5000}}", r"from 1 to 1000"),
    ],
)
def test_a_bad_scale_section_names_its_line(tmp_path, text: str, what: str) -> None:
    """A wrong `scale:` value is refused at its line with what to write instead."""
    path = tmp_path / "harness.yaml"
    path.write_text("\n" + text + "\n")

    with pytest.raises(ConfigError, match=r"harness\.yaml:2: .*" + what):
        load_config(path)


CHEAPEST_TABLE = """
checked: 2026-11-21
models:
  flash: {provider: gemini, input: "1.50", output: "7.50", cache_write: "1.50", cache_read: "0.15"}
  lite: {provider: gemini, input: "0.30", output: "2.50", cache_write: "0.30", cache_read: "0.03"}
  gone: {provider: gemini, input: "0.10", output: "0.40", cache_write: "0.10", cache_read: "0.01",
         retires: 2020-01-01}
  tiny: {provider: anthropic, input: "0.05", output: "0.25", cache_write: "0.06",
         cache_read: "0.01"}
"""


def test_a_route_to_the_cheapest_model_takes_its_providers_lowest_current_price(tmp_path) -> None:
    """`model: cheapest` resolves from the price table: the route's provider's lowest input
    plus output price, a retired model never, another provider's never."""
    (tmp_path / "prices.yaml").write_text(CHEAPEST_TABLE)
    path = tmp_path / "harness.yaml"
    path.write_text(
        "prices: prices.yaml\n"
        "routes: {cheap: {provider: gemini, model: cheapest, max_tokens: 4096}}\n"
    )

    route = load_config(path).routes["cheap"]

    assert (route.provider, route.model) == ("gemini", "lite")


def test_a_cheapest_route_with_no_current_model_on_its_provider_says_so(tmp_path) -> None:
    """No current model priced for the provider: an error at the route's line."""
    (tmp_path / "prices.yaml").write_text(CHEAPEST_TABLE)
    path = tmp_path / "harness.yaml"
    path.write_text(
        "prices: prices.yaml\n"
        "routes: {cheap: {provider: openai, model: cheapest, max_tokens: 4096}}\n"
    )

    with pytest.raises(ConfigError, match=r"harness\.yaml:2: routes\.cheap\.model: .*no current"):
        load_config(path)
