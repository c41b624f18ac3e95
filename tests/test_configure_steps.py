"""``pytest_configure``'s steps (``glue.setup``), each tried on its own config, and the run that
composes them."""

from __future__ import annotations

import pytest

from pytest_llmjudge.glue import setup

pytest_plugins = ["pytester"]


def test_a_bad_setting_is_a_usage_error_naming_it(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig("--llmjudge-temperature=warm")
    with pytest.raises(pytest.UsageError, match="temperature"):
        setup.run_settings(config)


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        ((), False),
        (("--llmjudge-budget=1",), True),
        (("--llmjudge-budget-tokens=1000",), True),
        (("--llmjudge-price=my-model=1/2",), True),
        (("--llmjudge-estimate",), True),
    ],
)
def test_cost_is_set_up_when_prices_a_budget_or_an_estimate_ask(
    pytester: pytest.Pytester, args: tuple[str, ...], wanted: bool
) -> None:
    config = pytester.parseconfig(*args)
    assert setup.cost_wanted(config, setup.run_settings(config)) is wanted


def test_only_an_xdist_controller_shares_with_workers(pytester: pytest.Pytester) -> None:
    assert not setup.is_controller(pytester.parseconfig())
    controller = pytester.parseconfig("-n", "2")
    assert setup.is_controller(controller)
    controller.workerinput = {"workerid": "gw0"}  # type: ignore[attr-defined]
    assert not setup.is_controller(controller)


def test_outputs_are_checked_by_the_process_that_writes_them(pytester: pytest.Pytester) -> None:
    pytester.makefile(".txt", in_the_way="")
    config = pytester.parseconfig("--llmjudge-cache-path=in_the_way.txt/cache.json")
    settings = setup.run_settings(config)
    with pytest.raises(pytest.UsageError, match=r"in_the_way\.txt is a file"):
        setup.check_outputs(config, settings)
    config.workerinput = {"workerid": "gw0"}  # type: ignore[attr-defined]
    setup.check_outputs(config, settings)  # a worker writes none of them


def test_lint_items_are_added_when_asked(pytester: pytest.Pytester) -> None:
    plain = pytester.parseconfig()
    setup.add_lint_items(plain)
    assert plain.pluginmanager.get_plugin("llmjudge-lint") is None
    asked = pytester.parseconfig("--llmjudge-lint")
    setup.add_lint_items(asked)
    assert asked.pluginmanager.get_plugin("llmjudge-lint") is not None


def test_the_configured_run_is_stashed_for_its_nodes(pytester: pytest.Pytester) -> None:
    from pytest_llmjudge.glue.stash import STATE

    config = pytester.parseconfigure("--llmjudge-budget=1")
    host = config.stash[STATE]
    assert host.settings.budget == 1
    assert config.pluginmanager.get_plugin("llmjudge-session") is host.judging


def test_a_run_with_a_bad_setting_stops_before_collecting(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest("--llmjudge-attempts=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*attempts*"])
    result.stdout.no_fnmatch_line("*1 passed*")
