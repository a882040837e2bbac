"""`endpoints:` in the config: named OpenAI-compatible servers a route may name, each priced
on its own."""

from __future__ import annotations

from decimal import Decimal

import pytest

from harness.config import ConfigError, check_prices, load_config


def config_file(tmp_path, text: str):
    path = tmp_path / "harness.yaml"
    path.write_text(text)
    return path


LOCAL = """
endpoints:
  local:
    api: openai
    base_url: http://localhost:11434/v1
    models: {"qwen2.5-coder:7b": {input_usd_per_mtok: 0, output_usd_per_mtok: 0}}
    concurrency: 2
routes:
  mid: {provider: local, model: "qwen2.5-coder:7b", max_tokens: 8192}
"""


def test_a_route_on_an_endpoint_is_priced_by_the_endpoint(tmp_path):
    """The endpoint's own row prices its model; its concurrency joins the provider limits."""
    config = load_config(config_file(tmp_path, LOCAL))

    table = check_prices(config)

    price = table.get("qwen2.5-coder:7b", "local")
    assert (price.input, price.output, price.provider) == (Decimal(0), Decimal(0), "local")
    assert config.provider_limits["local"] == 2


def test_one_model_id_is_priced_per_endpoint(tmp_path):
    """Two endpoints may serve one model id at different prices; the table's row stays the
    built-in provider's."""
    text = """
endpoints:
  a: {api: openai, base_url: "https://a.example/v1",
      models: {gpt-5.2: {input_usd_per_mtok: 9, output_usd_per_mtok: 90}}}
  b: {api: openai, base_url: "https://b.example/v1"}
routes:
  mid: {provider: a, model: gpt-5.2, max_tokens: 8192}
  cheap: {provider: b, model: gpt-5.2, max_tokens: 4096}
"""
    table = check_prices(load_config(config_file(tmp_path, text)))

    inputs = [table.get("gpt-5.2", p).input for p in ("a", "b", "openai")]
    assert inputs == [Decimal(9), Decimal("1.75"), Decimal("1.75")]


def test_a_model_priced_nowhere_is_refused(tmp_path):
    """A route to a model neither its endpoint nor the price table prices is a config error
    naming both places, never a silent $0."""
    text = LOCAL.replace('model: "qwen2.5-coder:7b", max_tokens', "model: llama-9, max_tokens")

    with pytest.raises(ConfigError, match=r"llama-9.*endpoints\.local\.models"):
        check_prices(load_config(config_file(tmp_path, text)))


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("routes: {mid: {provider: mistral}}", r":2: routes\.mid\.provider: unknown provider"),
        ("endpoints: {gemini: {api: openai, base_url: 'http://x/v1'}}", r"built-in provider"),
        ("endpoints: {x: {api: anthropic, base_url: 'http://x/v1'}}", r"endpoints\.x\.api"),
        ("endpoints: {x: {api: openai, base_url: 'localhost:8000'}}", r"http:// or https://"),
        (
            "endpoints: {x: {api: openai, base_url: 'http://x/v1', api_key_env: 'sk-abc 123'}}",
            r"names the environment variable",
        ),
        (
            "endpoints: {x: {api: openai, base_url: 'http://x/v1', models: {m: "
            "{input_usd_per_mtok: -1, output_usd_per_mtok: 0}}}}",
            r"input_usd_per_mtok",
        ),
    ],
    ids=["unknown-provider", "reserved-name", "api", "url", "key-env", "negative-price"],
)
def test_a_bad_endpoint_names_its_line(tmp_path, text: str, what: str):
    """Each endpoint problem is refused at its line with what to change."""
    with pytest.raises(ConfigError, match=what):
        load_config(config_file(tmp_path, "\n" + text + "\n"))


def test_a_key_pasted_into_api_key_env_is_not_quoted(tmp_path):
    """A key written where its variable's name belongs is refused without repeating it."""
    key = "sk-proj-pastedkeypastedkeypastedkey"
    text = f"endpoints: {{x: {{api: openai, base_url: 'http://x/v1', api_key_env: '{key}-'}}}}"

    with pytest.raises(ConfigError) as raised:
        load_config(config_file(tmp_path, text))

    assert key not in str(raised.value)
