"""Run time that grows with the run's size: pytest's failure summary and the judging phase."""

from __future__ import annotations

import pytest
from conftest import JUDGE_CONFTEST

COUNTING = """

_LOOKUPS = []


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    original = terminalreporter.getreports

    def counted(name):
        if name == "":
            _LOOKUPS.append(name)
        return original(name)

    terminalreporter.getreports = counted
    try:
        return (yield)
    finally:
        terminalreporter.write_line(f"passed-report scans: {len(_LOOKUPS)}")
"""


def test_the_failure_summary_scans_the_passed_reports_once_not_once_per_failure(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest("import pytest\n" + JUDGE_CONFTEST + COUNTING)
    cases = "".join(
        f"  - {{id: c{i}, source_narrative: n, candidate_output: {'FAIL' if i % 2 else 'ok'}}}\n"
        for i in range(12)
    )
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(
        "code: B1\nconcept: c\ninclusion_criteria: Apply always. Flag if wrong.\nthreshold: 0.1\ncases:\n"
        + cases
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks")
    out = result.stdout.str()
    assert out.count("verdict: FAIL") == 6, out
    assert "passed-report scans: 1" in out, out


GETREPR_COUNTING = """
import _pytest._code.code as _code

_FORMATTED = []
_getrepr = _code.ExceptionInfo.getrepr


def _counted(self, *args, **kwargs):
    _FORMATTED.append(1)
    return _getrepr(self, *args, **kwargs)


_code.ExceptionInfo.getrepr = _counted


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"tracebacks formatted: {len(_FORMATTED)}")
"""


def test_a_judge_error_formats_no_traceback(pytester: pytest.Pytester) -> None:
    """A replay miss (or any judge ERROR) is its own short text: formatting pytest's traceback for
    it first cost 0.2 s per error, 55 s for 300 misses."""
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(JUDGE_CONFTEST + GETREPR_COUNTING)
    cases = "".join(f"  - {{id: c{i}, source_narrative: n, candidate_output: o{i}}}\n" for i in range(5))
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(
        "code: B1\nconcept: c\ninclusion_criteria: Apply always. Flag if wrong.\nthreshold: 0.1\ncases:\n"
        + cases
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "--llmjudge-cache=replay", "benchmarks"
    )
    out = result.stdout.str()
    assert out.count("\njudge ERROR (cache-miss)") == 5, out
    assert "tracebacks formatted: 0" in out, out
