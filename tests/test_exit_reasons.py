"""Every non-zero exit says why, and says the same in the terminal, the results file and the
HTML report's header: the reasons are decided once (``gating.exit_status.decide_exit``)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from tests.conftest import Suite
from tests.test_calibration_run import _benchmark, _calibration_lines


class _Header(HTMLParser):
    """The visible text of the report's ``<header class="run">`` exit block, one item a line."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.items: list[str] = []
        self.code = ""
        self._tag = ""
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if self.depth:
            self.depth += tag != "br"
        elif tag == "div" and "exit" in classes:
            self.depth = 1
        self._tag = tag

    def handle_endtag(self, tag: str) -> None:
        if self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if not self.depth or not data.strip():
            return
        if self._tag == "li":
            self.items.append(data.strip())
        elif self._tag == "span":
            self.code = data.strip()


def _terminal_reasons(output: str, status: int) -> list[str]:
    """The reasons of the summary's ``exit status N`` line(s)."""
    lines = output.splitlines()
    marker = f"exit status {status}"  # also "llmjudge: exit status 0: …" below pytest's final line
    start = next(
        i for i, line in enumerate(lines) if line.startswith(marker) or f"llmjudge: {marker}" in line
    )
    first = lines[start].split(marker, 1)[1]
    if first.startswith(": "):
        return [first[2:]]
    return [line[4:] for line in lines[start + 1 :] if line.startswith("  - ")]


def _run(suite: Suite, *args: str) -> tuple[pytest.RunResult, dict, _Header]:  # type: ignore[type-arg]
    result = suite.run(
        "--llmjudge-results=run.json", "--llmjudge-html=report.html", "--junitxml=junit.xml", *args
    )
    data = json.loads((suite.root / "run.json").read_text())
    return result, data, _Header((suite.root / "report.html").read_text())


def _junit(suite: Suite) -> tuple[str, list[str], dict[str, str]]:
    """The exit status, the exit reasons and the gate details ``--junitxml`` recorded."""
    import xml.etree.ElementTree as ElementTree

    root = ElementTree.parse(suite.root / "junit.xml").getroot()
    props = [(p.get("name") or "", p.get("value") or "") for p in root.iter("property")]
    status = next(value for name, value in props if name == "llmjudge_exit_status")
    reasons = [value for name, value in props if name == "llmjudge_exit_reason"]
    gates = {name.split(":", 1)[1]: value for name, value in props if name.startswith("llmjudge_gate:")}
    return status, reasons, gates


def _agree(result: pytest.RunResult, data: dict, header: _Header) -> list[str]:  # type: ignore[type-arg]
    """The one list of reasons that the terminal, the results file and the header all show."""
    output = result.stdout.str()
    terminal = _terminal_reasons(output, result.ret)
    assert terminal, output
    assert data["exit_status"] == result.ret
    assert data["exit_reasons"] == terminal
    assert header.code == f"exit {result.ret}"
    assert header.items == terminal
    return terminal


def _agree_with_junit(suite: Suite, result: pytest.RunResult, data: dict, reasons: list[str]) -> None:  # type: ignore[type-arg]
    """JUnit says the same: the status, every reason, and each gate's detail as the results file."""
    status, junit_reasons, gates = _junit(suite)
    assert (int(status), junit_reasons) == (result.ret, reasons)
    for benchmark in data["benchmarks"]:
        detail = benchmark["gate"]["detail"]
        assert gates[benchmark["code"]].endswith(detail), (gates, detail)


def test_an_untrusted_judge_gives_its_reason_everywhere(suite: Suite) -> None:
    suite.write("data/CAL1.jsonl", _calibration_lines(), dedent=False)
    suite.benchmark("CAL1", _benchmark("{min_tpr: 0.95, min_tnr: 0.8, min_labels: 30}"))
    result, data, header = _run(suite)
    assert result.ret == 1
    reasons = _agree(result, data, header)
    assert reasons == ["gate CAL1 failed: judge untrusted: TPR 0.90 < 0.95 (45/50), 100 labels"]
    _agree_with_junit(suite, result, data, reasons)
    assert "every gate passed" not in header.items


def test_a_run_whose_every_case_errors_gives_its_reasons_everywhere(suite: Suite) -> None:
    suite.benchmark(
        "ERR1",
        """\
        code: ERR1
        concept: The output is fine.
        threshold: 0.5
        inclusion_criteria: Apply always. Flag if it says FAIL.
        cases:
          - {id: one, candidate_output: good}
          - {id: two, candidate_output: good}
        """,
    )
    result, data, header = _run(suite, "--llmjudge-cache=replay")  # an empty cache: every case errors
    assert result.ret == 1
    assert data["totals"]["errors"] == 2
    reasons = _agree(result, data, header)
    assert any("ERR1" in r and "2 judge errors" in r for r in reasons), reasons
    assert any(re.fullmatch(r"2 failing or erroring item\(s\)", r) for r in reasons), reasons
    _agree_with_junit(suite, result, data, reasons)
    assert "every gate passed" not in header.items


def test_a_passing_run_says_so_everywhere(suite: Suite) -> None:
    suite.benchmark(
        "OK1",
        """\
        code: OK1
        concept: The output is fine.
        threshold: 0.5
        inclusion_criteria: Apply always. Flag if it says FAIL.
        cases:
          - {id: one, candidate_output: good}
        """,
    )
    result, data, header = _run(suite)
    assert result.ret == 0
    assert _agree(result, data, header) == ["no gate failed, no item failed or errored"]


def test_a_run_whose_failures_its_gate_tolerates_gives_its_reasons_everywhere(suite: Suite) -> None:
    suite.benchmark(
        "TOL1",
        """\
        code: TOL1
        concept: The output is fine.
        threshold: 0.5
        inclusion_criteria: Apply always. Flag if it says FAIL.
        cases:
          - {id: one, candidate_output: good}
          - {id: two, candidate_output: FAIL}
        """,
    )
    result, data, header = _run(suite)
    assert result.ret == 0
    reasons = _agree(result, data, header)
    assert reasons == ["1 failing case(s) of TOL1 are within its gate (pass rate 50.0%, needs 50%)"]
    _agree_with_junit(suite, result, data, reasons)


def test_a_run_whose_prompt_snapshot_differs_gives_its_reasons_everywhere(suite: Suite) -> None:
    text = """\
        code: SNAP1
        concept: The output is fine.
        threshold: 0.5
        inclusion_criteria: Apply always. Flag if it says FAIL.
        cases:
          - {id: one, candidate_output: good}
        """
    suite.benchmark("SNAP1", text)
    suite.run("--snapshot-update", syrupy=True)
    suite.benchmark("SNAP1", text.replace("The output is fine.", "The output is fine and short."))
    result = suite.run(
        "--llmjudge-results=run.json", "--llmjudge-html=report.html", "--junitxml=junit.xml", syrupy=True
    )
    data = json.loads((suite.root / "run.json").read_text())
    header = _Header((suite.root / "report.html").read_text())
    assert result.ret == 1
    reasons = _agree(result, data, header)
    assert "compiled judge requests differ from their snapshots (see snapshot report)" in reasons
    _agree_with_junit(suite, result, data, reasons)
