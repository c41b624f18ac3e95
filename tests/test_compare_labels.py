"""A rubric edit measured against human labels: two ``llmjudge calibrate`` runs, before and after
a prompt edit, compared by ``llmjudge compare`` and by the HTML report of the second.

The judge below fails an output that says FAIL, and one that hedges ("maybe") unless the rubric
says hedging is acceptable. Five cases a human passes hedge: the edit that accepts hedging turns
them from wrong to right and no case the other way, so the exact McNemar p is 2 · 0.5⁵ = 0.0625.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from scipy.stats import binomtest  # type: ignore[import-untyped]

from pytest_llmjudge.gating.label_agreement import Judgment, compare_labels
from tests.conftest import Suite

HEDGING_JUDGE = """
import re

import pydantic_ai.models
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False


def judge(messages, info):
    prompt = "".join(
        p.content for m in messages for p in m.parts if isinstance(getattr(p, "content", None), str)
    )
    output = re.search(r"<Output>\\n(.*?)\\n</Output>", prompt, re.S).group(1)
    lenient = "Hedging is acceptable" in prompt
    if "FAIL" in output:
        passed, reason = False, "the output is marked FAIL"
    elif "maybe" in output and not lenient:
        passed, reason = False, "the output hedges"
    else:
        passed, reason = True, "the output answers" + (" (hedging accepted)" if lenient else "")
    args = {"pass": passed, "reason": reason}
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="hedging-judge")
"""

HEDGED, PLAIN, FAILING = 5, 3, 4


def _benchmark(concept: str) -> str:
    cases = [f"  - {{id: hedged-{i}, candidate_output: maybe yes, label: pass}}" for i in range(HEDGED)]
    cases += [f"  - {{id: plain-{i}, candidate_output: yes, label: pass}}" for i in range(PLAIN)]
    cases += [f"  - {{id: bad-{i}, candidate_output: FAIL no, label: fail}}" for i in range(FAILING)]
    cases += ["  - {id: unlabelled, candidate_output: maybe}"]
    lines = [
        "code: HEDGE1",
        f"concept: {concept}",
        "threshold: 0.5",
        "inclusion_criteria: Apply when there is output. Flag if it does not answer.",
        "cases:",
        *cases,
    ]
    return "\n".join(lines) + "\n"


def _llmjudge(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest_llmjudge.cli.main", *args]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)


def _calibrate_before_and_after_the_edit(suite: Suite) -> None:
    suite.pytester.makeconftest(HEDGING_JUDGE)
    suite.benchmark("HEDGE1", _benchmark("The output answers the question."))
    before = _llmjudge(suite.root, "calibrate", "benchmarks", "--", "--llmjudge-results=old.json")
    assert before.returncode == 0, before.stdout + before.stderr
    assert "results file: old.json" in before.stdout
    suite.benchmark("HEDGE1", _benchmark("The output answers the question. Hedging is acceptable."))
    after = _llmjudge(suite.root, "calibrate", "benchmarks", "--", "--llmjudge-results", "new.json")
    assert after.returncode == 0, after.stdout + after.stderr
    (benchmark,) = json.loads((suite.root / "new.json").read_text())["benchmarks"]
    assert benchmark["calibration"]["n_labels"] == HEDGED + PLAIN + FAILING
    assert all(c["label"] for c in benchmark["cases"])  # only the labelled cases were judged


def test_a_prompt_edit_measured_against_the_labels(suite: Suite) -> None:
    _calibrate_before_and_after_the_edit(suite)
    done = _llmjudge(suite.root, "compare", "old.json", "new.json")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert binomtest(HEDGED, HEDGED, 0.5).pvalue == 0.0625
    title = out.index("agreement with the human labels")
    row = next(line for line in out[title:].splitlines() if line.startswith("  HEDGE1"))
    cells = re.split(r"\s{2,}", row.strip())
    tpr_before = f"{PLAIN / (PLAIN + HEDGED):.2f}"
    agreement_before = f"{(PLAIN + FAILING) / (PLAIN + HEDGED + FAILING):.2f}"
    assert cells[:3] == ["HEDGE1", "12", f"{tpr_before} → 1.00"]
    assert cells[3] == "1.00 → 1.00"  # TNR: the FAIL cases stay right
    assert cells[5] == f"{agreement_before} → 1.00"
    assert cells[6:] == ["0", "5", "0.0625", "0.0625", "inconclusive"]  # 12 labels cannot show 5 pp
    assert "labelled cases now wrong (right before): 0" in out
    assert "labelled cases now right (wrong before): 5" in out
    assert re.search(
        r"HEDGE1::hedged-0 at benchmarks/a/HEDGE1\.yaml:\d+ \(human pass\): judge fail → pass\n"
        r"    before: the output hedges\n"
        r"    after:  the output answers \(hedging accepted\)",
        out,
    ), out
    _the_report_of_the_new_run_shows_the_same(suite)


def _the_report_of_the_new_run_shows_the_same(suite: Suite) -> None:
    done = _llmjudge(suite.root, "report", "new.json", "--baseline", "old.json", "-o", "report.html")
    assert done.returncode == 0, done.stdout + done.stderr
    page = (suite.root / "report.html").read_text()
    section = page[page.index('id="label-agreement"') :]
    section = section[: section.index("</section>")]
    text = re.sub(r"<[^>]+>", " ", section)
    assert re.search(r"HEDGE1\s+inconclusive\s+12\s+0\.38 → 1\.00\s+1\.00 → 1\.00", text), text
    assert re.search(r"\b0\s+5\s+0\.0625\s+0\.0625", text), text
    assert "hedged-4" in text and "the output hedges" in text and "hedging accepted" in text
    assert "plain-0" not in text  # right in both runs: not listed


def test_compare_says_nothing_of_labels_when_a_run_judged_none(suite: Suite) -> None:
    suite.pytester.makeconftest(HEDGING_JUDGE)
    suite.benchmark("HEDGE1", _benchmark("The output answers the question."))
    assert suite.run("--llmjudge-results=labelled.json").ret == 1
    suite.benchmark("HEDGE1", "code: HEDGE1\nconcept: Fine.\ncases:\n  - {id: a, candidate_output: yes}\n")
    assert suite.run("--llmjudge-results=plain.json").ret == 0
    done = _llmjudge(suite.root, "compare", "labelled.json", "plain.json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "baseline comparison" in done.stdout and "human labels" not in done.stdout


def _judgments(code: str, rights: list[bool]) -> dict[str, dict[str, Judgment]]:
    return {
        code: {
            f"c{i}": Judgment(f"c{i}", f"f.yaml:{i}", True, right, "why") for i, right in enumerate(rights)
        }
    }


def test_holm_adjusts_across_benchmarks_and_names_the_direction() -> None:
    before = {**_judgments("A", [False] * 12), **_judgments("B", [True] * 12)}
    after = {**_judgments("A", [True] * 12), **_judgments("B", [True] * 11 + [False])}
    improved, steady = compare_labels(before, after)
    assert (improved.turned_right, improved.turned_wrong) == (12, 0)
    assert improved.p_value == binomtest(12, 12, 0.5).pvalue
    assert improved.p_adjusted == pytest.approx(2 * improved.p_value)  # Holm: the smaller p doubled
    assert improved.verdict == "agreement improved"
    assert (steady.turned_wrong, steady.p_value, steady.verdict) == (1, 1.0, "inconclusive")
    worse = compare_labels(after, before)[0]
    assert worse.verdict == "agreement worse"


def test_a_relabelled_case_is_not_paired() -> None:
    before = _judgments("A", [True, True])
    after = {"A": {**before["A"], "c1": Judgment("c1", "f.yaml:1", False, True, "why")}}
    (comparison,) = compare_labels(before, after)
    assert (comparison.n_paired, comparison.unpaired) == (1, 1)
