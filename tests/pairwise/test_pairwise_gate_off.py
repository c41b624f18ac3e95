"""A pairwise gate must not switch itself off: a baseline that pairs no case fails the gate and
names the baseline, a partly paired gate states its coverage, and a judge that always names the
same position is not trusted (``judge.min_consistency`` defaults to ½)."""

from __future__ import annotations

import json

import pytest
from conftest import Suite

from .test_pairwise_run import bench, case, head, pairs, results  # noqa: F401  (fixture)

WORSE = ("--llmjudge-pairwise", "--llmjudge-fail-on", "worse")


def baseline_run(suite: Suite) -> None:
    """A release run judged case by case: its results file records the outputs of c0…c3."""
    suite.benchmark("P-FILE", head("P-FILE") + "".join(case(f"c{i}", f"plain {i}", None) for i in range(4)))
    suite.run("--llmjudge-results", "base.json")


def without_outputs(suite: Suite) -> None:
    """The baseline results file with no produced output recorded for any case."""
    path = suite.root / "base.json"
    data = json.loads(path.read_text())
    for benchmark in data["benchmarks"]:
        for recorded in benchmark["cases"]:
            recorded["produced"] = None
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("code", "ids", "damage", "why"),
    [
        ("P-FILE", "x", False, "--llmjudge-baseline base.json has none of P-FILE's case ids"),
        ("P-NEW", "c", False, "--llmjudge-baseline base.json has no benchmark P-NEW"),
        ("P-FILE", "c", True, "--llmjudge-baseline base.json recorded no output of P-FILE's cases"),
    ],
)
def test_a_baseline_that_pairs_no_case_fails_the_gate_and_names_the_baseline(
    pairs: Suite,  # noqa: F811
    code: str,
    ids: str,
    damage: bool,
    why: str,
) -> None:
    baseline_run(pairs)
    if damage:
        without_outputs(pairs)
    (pairs.root / "benchmarks/a/P-FILE.yaml").unlink()
    pairs.benchmark(code, head(code) + "".join(case(f"{ids}{i}", f"BETTER {i}", None) for i in range(4)))
    result = pairs.run(*WORSE, "--llmjudge-baseline", "base.json", "--llmjudge-results", "run.json")
    data = results(pairs, "run.json")
    gate = bench(data, code)["gate"]
    assert gate["status"] == "fail"
    assert gate["detail"].startswith(f"no case paired with the baseline (paired 0 of 4 cases): {why}")
    assert f"gate {code} failed: {gate['detail']}" in data["exit_reasons"]
    assert result.ret == 1
    assert "exit status 1" in result.stdout.str()


def test_without_any_baseline_a_pairwise_gate_fails_and_says_so(pairs: Suite) -> None:  # noqa: F811
    pairs.benchmark("P-NONE", head("P-NONE") + case("a", "BETTER", None) + case("b", "words", None))
    result = pairs.run(*WORSE, "--llmjudge-results", "run.json")
    gate = bench(results(pairs, "run.json"), "P-NONE")["gate"]
    assert (gate["status"], gate["detail"]) == (
        "fail",
        "no case paired with the baseline (paired 0 of 2 cases): no --llmjudge-baseline given, and no "
        "case has a baseline_output of its own",
    )
    assert result.ret == 1


def test_a_partly_paired_gate_states_its_coverage(pairs: Suite) -> None:  # noqa: F811
    baseline_run(pairs)
    pairs.benchmark(
        "P-FILE",
        head("P-FILE") + "".join(case(f"{'c' if i < 2 else 'x'}{i}", f"BETTER {i}", None) for i in range(5)),
    )
    result = pairs.run(*WORSE, "--llmjudge-baseline", "base.json", "--llmjudge-results", "run.json")
    gate = bench(results(pairs, "run.json"), "P-FILE")["gate"]
    assert (gate["status"], gate["detail"]) == ("pass", "paired 2 of 5 cases")
    assert "paired 2 of 5 cases" in result.stdout.str()
    assert result.ret == 0


def test_a_judge_that_always_answers_a_is_untrusted_by_default(pairs: Suite) -> None:  # noqa: F811
    # the judge names A whenever an output carries BIASED: it ignores which output is better
    pairs.benchmark(
        "P-BIAS", head("P-BIAS") + "".join(case(f"c{i}", f"BIASED {i}", f"BETTER {i}") for i in range(6))
    )
    result = pairs.run(*WORSE, "--llmjudge-results", "run.json")
    data = results(pairs, "run.json")
    benchmark = bench(data, "P-BIAS")
    assert benchmark["pairwise"]["verdict"] == "inconclusive"  # every pair inconsistent: ties
    assert benchmark["pairwise"]["min_consistency"] == 0.5
    detail = "judge position consistency 0% of 6 pairs, below judge.min_consistency 50% (its default)"
    assert (benchmark["gate"]["status"], benchmark["gate"]["detail"]) == ("untrusted", detail)
    assert f"gate P-BIAS failed: {detail}" in data["exit_reasons"]
    result.stdout.fnmatch_lines(
        ["P-BIAS: the judge mostly picks one position: it named A in 12 of 12 answers, *"]
    )
    assert result.ret == 1


def test_a_min_consistency_of_its_own_replaces_the_default(pairs: Suite) -> None:  # noqa: F811
    pairs.benchmark(
        "P-BIAS",
        head("P-BIAS", "judge: {min_consistency: 0}\n")
        + "".join(case(f"c{i}", f"BIASED {i}", f"BETTER {i}") for i in range(6)),
    )
    result = pairs.run(*WORSE, "--llmjudge-results", "run.json")
    assert bench(results(pairs, "run.json"), "P-BIAS")["gate"]["status"] == "pass"
    assert "the judge mostly picks one position" in result.stdout.str()  # said, not gated
    assert result.ret == 0
