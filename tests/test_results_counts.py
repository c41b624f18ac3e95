"""What the results file counts at its edges: judge calls that gave no verdict, the 20-case line
below which a gate's evidence is low, and a sample the judge was not sure of."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Suite
from tests.test_guards import GUARD_CONFTEST, HEAD


def cases(outputs: list[str]) -> str:
    return "cases:\n" + "".join(
        f"  - {{id: c{i}, candidate_output: {out}}}\n" for i, out in enumerate(outputs)
    )


@pytest.fixture
def results(pytester: pytest.Pytester) -> dict:  # type: ignore[type-arg]
    pytester.makeini("[pytest]\nllmjudge_attempts = 1\n")
    pytester.makeconftest(GUARD_CONFTEST)
    suite = Suite(pytester)
    suite.benchmark("B-TWENTY", "code: B-TWENTY\nthreshold: 0.5\n" + HEAD + cases(["fine"] * 20))
    suite.benchmark(
        "B-NINETEEN",
        "code: B-NINETEEN\nthreshold: 0.5\n" + HEAD + cases(["fine"] * 18 + ["UNSURE", "BROKEN"]),
    )
    suite.run("--llmjudge-results=run.json", "--llmjudge-cache=off")
    return json.loads((suite.root / "run.json").read_text())  # type: ignore[no-any-return]


def test_the_results_file_counts_at_its_edges(results: dict) -> None:  # type: ignore[type-arg]
    # a judge call that raised gave no verdict, but it was a model call, as the terminal counts it
    assert results["totals"]["errors"] == 1
    assert results["totals"]["calls"] == 40  # 20 + 19 verdicts + 1 call that raised

    # evidence is low under 20 verdicts: B-NINETEEN has 20 cases, one errored
    gates = {b["code"]: b["gate"] for b in results["benchmarks"]}
    assert (gates["B-TWENTY"]["cases"], gates["B-TWENTY"]["low_evidence"]) == (20, False)
    assert (gates["B-NINETEEN"]["cases"], gates["B-NINETEEN"]["low_evidence"]) == (20, True)

    # a sample the judge was unsure of says so, and fails its case
    (nineteen,) = [b for b in results["benchmarks"] if b["code"] == "B-NINETEEN"]
    unsure = next(c for c in nineteen["cases"] if c["id"] == "c18")
    assert (unsure["result"], unsure["uncertain"]) == ("fail", True)
    assert [s["uncertain"] for s in unsure["samples"]] == [True]
    assert all(not s["uncertain"] for c in nineteen["cases"] if c["id"] != "c18" for s in c["samples"])
