"""Settings merged from several sources (VS Code's initializationOptions, acp-lsp.toml files)
that name the same setting in camelCase and in snake_case."""

from __future__ import annotations

from acp_lsp.config import load_settings


def test_one_setting_named_two_ways_in_two_sources_is_one_setting() -> None:
    # VS Code sends defaultAgent; a workspace acp-lsp.toml may say default_agent. Before, the
    # merge held both keys and validating them raised instead of naming a problem.
    settings, problems = load_settings(
        [
            {"defaultAgent": "demo", "agents": {"x": {"command": "a", "requestTimeout": 9}}},
            {"default_agent": "x", "agents": {"x": {"request_timeout": 5, "env": {"MY_VAR": "1"}}}},
        ]
    )
    assert problems == []
    assert settings.default_agent == "x"  # the later source wins, whichever spelling
    assert settings.agents["x"].request_timeout == 5
    assert settings.agents["x"].env == {"MY_VAR": "1"}  # env names are not settings: as given


def test_a_preset_field_given_in_snake_case_overrides_the_preset() -> None:
    settings, problems = load_settings([{"agents": {"claude": {"start_timeout": 12}}}])
    assert problems == []
    assert settings.agents["claude"].start_timeout == 12


def test_the_notification_cap_is_a_setting_with_bounds() -> None:
    settings, problems = load_settings([{"maxNotificationsPerSecond": 500}])
    assert problems == [] and settings.max_notifications_per_second == 500
    settings, problems = load_settings([{"maxNotificationsPerSecond": 0}])
    assert settings.max_notifications_per_second == 100  # the default is kept
    assert len(problems) == 1 and "maxNotificationsPerSecond" in problems[0], problems
