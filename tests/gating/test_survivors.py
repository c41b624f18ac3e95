"""Behaviours of ``gating/`` found by mutation testing (mutmut): each test here tells a mutant that
survived the gating tests from the real code. The pre-run estimate with pairwise orders, repeats
and per-request fees, its one-line description, the stored calibration's file name, the task
errors a gate counts, the interval of an all-pass benchmark, the calibration's κ and intervals
with few labels, and a panel's agreement and error with two judges."""

from __future__ import annotations

import hashlib
from decimal import Decimal
from pathlib import Path

import pytest

from pytest_llmjudge.cost.pricing import Price, cost_of, price_for
from pytest_llmjudge.cost.tokens import ModelTokens, TokenRange
from pytest_llmjudge.gating.calibration import Confusion, agreement, calibration_path
from pytest_llmjudge.gating.estimate import Miss, estimate_benchmark, estimate_calls
from pytest_llmjudge.gating.gates import benchmark_gates, why
from pytest_llmjudge.gating.panel_agreement import fleiss_kappa
from pytest_llmjudge.gating.panel_outcome import combine_panel
from pytest_llmjudge.gating.records import CaseRecord
from pytest_llmjudge.gating.statistics import wilson_interval
from pytest_llmjudge.judging.verdict import JudgeFailure
from tests.cost.test_estimate import REQUEST, words
from tests.gating.test_panel_outcome import BENCHMARK, SETTINGS, failed, judged

FINGERPRINT = "0123456789abcdef" * 4


def linear() -> ModelTokens:
    """$1,000 / $2,000 per Mtok in/out, counted by words, with a history of 10 to 30 output tokens."""
    price = Price("m", None, Decimal(1000), None, Decimal(2000), "--llmjudge-price")
    return ModelTokens(price, tokenizer=words, output_history=(10, 20, 30))


# -- the estimate ------------------------------------------------------------------------------


def test_every_token_count_is_multiplied_by_samples_and_orders() -> None:
    # 40 characters at 4 a token: 10 tokens, 8 to 12; sent 3 samples × 2 orders
    estimate = estimate_calls([Miss("x" * 40, samples=3)], ModelTokens(None), orders=2)
    assert (estimate.calls, estimate.input_tokens) == (6, TokenRange(60, 48, 72))


def test_a_pairwise_benchmark_with_repeats_is_described_in_whole() -> None:
    result = estimate_benchmark("B", [Miss("a b c", samples=2), Miss("d e")], linear(), orders=2)
    # 6 calls; 2 × 2 × 3 + 2 × 2 input tokens; 20 (10–30) output tokens a call
    assert (result.judge.cost, result.judge.cost_low, result.judge.cost_high) == (
        Decimal("0.256"),
        Decimal("0.136"),
        Decimal("0.376"),
    )
    assert result.describe() == (
        "B: 6 judge calls (2 misses, 3 samples, 2 orders), 16 in / 120 out tokens, $0.256 ($0.136–$0.376)"
    )


def test_one_order_is_said_in_the_singular() -> None:
    result = estimate_benchmark("B", [Miss("a b c")], linear())
    assert result.describe() == (
        "B: 1 judge calls (1 misses, 1 samples, 1 order), 3 in / 20 out tokens, $0.043 ($0.023–$0.063)"
    )


def test_an_unpriced_benchmark_lists_every_guess() -> None:
    result = estimate_benchmark("B", [Miss("x" * 40)], ModelTokens(None))
    assert result.describe() == (
        "B: 1 judge calls (1 misses, 1 samples, 1 order), 10 in / 100 out tokens, "
        "cost unknown (a model has no price); "
        "approximate: input tokens (4 characters a token), output tokens (default)"
    )


def test_a_priced_benchmark_with_nothing_to_call_costs_zero_dollars() -> None:
    estimate = estimate_calls([], linear())
    assert (estimate.cost, estimate.cost_low, estimate.cost_high) == (Decimal(0), Decimal(0), Decimal(0))
    result = estimate_benchmark("B", [], linear())
    assert result.describe() == (
        "B: 0 judge calls (0 misses, 0 samples, 1 order), 0 in / 0 out tokens, $0.00 ($0.00–$0.00)"
    )


def test_a_per_request_fee_is_charged_once_a_call() -> None:
    price = price_for("perplexity:sonar", None, {})
    if price is None or price.tiered or cost_of(price, 0, 0, 0) == 0:
        pytest.skip("this genai-prices has no per-request fee for perplexity:sonar")
    model = ModelTokens(price, tokenizer=words, output_history=(50,))
    estimate = estimate_calls([Miss(REQUEST, samples=2), Miss("a b c")], model, orders=2)
    each = cost_of(price, words(REQUEST), 0, 50), cost_of(price, 3, 0, 50)
    assert estimate.cost == 4 * each[0] + 2 * each[1]


def test_a_tiered_price_charges_every_sample_and_order() -> None:
    from genai_prices.data_snapshot import get_snapshot
    from genai_prices.types import TieredPrices

    found = [
        (provider.id, model.id)
        for provider in get_snapshot().providers
        for model in provider.models
        if not isinstance(model.prices, list) and isinstance(model.prices.input_mtok, TieredPrices)
    ]
    if not found:
        pytest.skip("this genai-prices has no tiered model")
    price = price_for(f"{found[0][0]}:{found[0][1]}", None, {})
    assert price is not None and price.tiered
    model = ModelTokens(price, tokenizer=words, output_history=(7,))
    estimate = estimate_calls([Miss("a b c", samples=3)], model, orders=2)
    assert estimate.cost == 6 * cost_of(price, 3, 0, 7)


# -- the stored calibration's file -------------------------------------------------------------


def test_a_calibration_file_is_named_after_its_benchmark_and_judge() -> None:
    folder = Path(".llmjudge/calibration")
    assert calibration_path(folder, "REL-1.v2_x", FINGERPRINT) == folder / "REL-1.v2_x-0123456789abcdef.json"


def test_a_benchmark_name_unsafe_in_a_file_name_is_replaced_and_hashed() -> None:
    folder = Path(".llmjudge/calibration")
    name = "billing/refunds v2"
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    assert digest == "dbcd02d0"
    assert calibration_path(folder, name, FINGERPRINT) == (
        folder / "billing_refunds_v2~dbcd02d0-0123456789abcdef.json"
    )


@pytest.mark.parametrize(
    "counts",
    [Confusion(0, 0, 1, 1), Confusion(0, 1, 1, 0), Confusion(1, 1, 0, 0)],
    ids=["no human pass", "judge never passes", "no human fail"],
)
def test_two_labels_have_a_kappa_of_zero_when_one_side_never_varies(counts: Confusion) -> None:
    assert agreement(counts).kappa == 0.0


def test_the_stored_agreement_keeps_both_intervals() -> None:
    agree = agreement(Confusion(3, 1, 2, 1))
    assert agree.tpr_ci == wilson_interval(3, 4) and agree.tnr_ci == wilson_interval(2, 3)
    found = agree.to_dict()
    assert (found["tpr_ci"], found["tnr_ci"]) == (list(wilson_interval(3, 4)), list(wilson_interval(2, 3)))


# -- panels ------------------------------------------------------------------------------------


def test_a_two_judge_panel_has_a_fleiss_kappa() -> None:
    # agreement 2/3 against chance 1/2
    assert fleiss_kappa([[True, True], [False, False], [True, False]]) == pytest.approx(1 / 3)


def test_one_failing_member_of_two_names_the_panel_error() -> None:
    members = [[judged("a", True)], [failed("b", "timeout", "slow")]]
    outcome = combine_panel(BENCHMARK, members, "majority", 2, SETTINGS)
    assert outcome.failure == JudgeFailure(
        "timeout", "only 1 of 2 panel judges answered, 2 needed: b: timeout: slow"
    )


# -- gates -------------------------------------------------------------------------------------


def test_a_gate_without_verdicts_counts_its_task_and_judge_errors() -> None:
    records = [
        CaseRecord("B1", "c1", "error", reason="task-error: the service is down"),
        CaseRecord("B1", "c2", "error", reason="task-timeout: no answer in 30 s"),
        CaseRecord("B1", "c3", "error", reason="judge-error: http 500"),
    ]
    [gate] = benchmark_gates(records)
    assert (gate.status, gate.errors, gate.task_errors) == ("no verdicts", 3, 2)
    assert why(gate) == "2 task errors, 1 judge error, no verdict"


# -- statistics --------------------------------------------------------------------------------


@pytest.mark.parametrize(("successes", "n"), [(9, 9), (26, 26), (0, 21)])
def test_an_all_or_nothing_rate_interval_stays_within_zero_and_one(successes: int, n: int) -> None:
    # unclipped, Wilson's formula gives 1.0000000000000002 for 9 of 9, -1.4e-17 for 0 of 21
    low, high = wilson_interval(successes, n)
    assert 0.0 <= low <= high <= 1.0
    assert (high if successes else low) == (1.0 if successes else 0.0)


# -- second pass: the corrected interval, stored calibrations, answered snapshots ---------------


def test_one_positive_and_one_negative_label_still_give_a_corrected_interval() -> None:
    from pytest_llmjudge.gating.calibration import CorrectedRate, corrected_interval

    # two labels resample to one of each half the time: those rounds (TPR = TNR = 1) count
    found = corrected_interval([(True, True), (False, False)], [True, False], seed=0, resamples=200)
    assert found == CorrectedRate(0.5, 0.0, 1.0, False, 0, 200)


def test_the_corrected_interval_is_the_central_95_percent_of_the_resampled_rates() -> None:
    from pytest_llmjudge.gating.calibration import corrected_interval

    # perfect labels: every round's rate is its resampled pass count of 50
    labelled = [(True, True)] * 20 + [(False, False)] * 20
    found = corrected_interval(labelled, [True] + [False] * 49, seed=0)
    assert (found.theta, found.low, found.high) == pytest.approx((0.02, 0.0, 0.06), abs=1e-12)


def test_a_calibration_of_this_judge_under_an_older_file_name_is_not_stale(tmp_path: Path) -> None:
    from pytest_llmjudge.gating.calibration import confusion, stale_calibration, store_calibration

    pairs = [(True, True), (False, False)]
    written = store_calibration(tmp_path, FINGERPRINT, "B", agreement(confusion(pairs)), pairs)
    written.rename(tmp_path / "B-old.json")
    assert stale_calibration(tmp_path, "B", FINGERPRINT) is False
    assert stale_calibration(tmp_path, "B", "f" * 64) is True


def test_a_calibration_that_does_not_read_back_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_llmjudge.gating import calibration

    # a file system that keeps something else than what was written
    monkeypatch.setattr(calibration, "write_text", lambda path, text: path.write_text("{}"))
    path = calibration.calibration_path(tmp_path, "B", FINGERPRINT)
    with pytest.raises(OSError) as raised:
        calibration.merge_calibration(tmp_path, FINGERPRINT, "B", {"c1": (True, True)})
    assert str(raised.value) == f"{path} does not read back as the calibration just written"


def test_a_panel_member_keeps_the_snapshot_that_answered_each_sample() -> None:
    from pytest_llmjudge.gating.panel_records import panel_record
    from pytest_llmjudge.judging.verdict import Outcome, Verdict
    from pytest_llmjudge.models.answered import Answered

    def answered(snapshot: str) -> Verdict:
        return Verdict(True, "ok", answered=Answered(snapshot, "fp"))

    once = Outcome(answered("a-1"), model="a")
    twice = Outcome(
        answered("b-2"),
        model="b",
        samples=(Outcome(answered("b-1"), model="b"), Outcome(answered("b-2"), model="b")),
    )
    record = panel_record(Outcome(None, members=(once, twice)), "majority", 2)
    assert [m.answered for m in record.members] == [(("a-1", "fp"),), (("b-1", "fp"), ("b-2", "fp"))]


def test_a_sample_record_names_who_answered_it() -> None:
    from pytest_llmjudge.gating.records import SampleRecord

    assert SampleRecord(0, True, answered_model="m-1", answered_fingerprint="fp").to_results()[
        "answered_by"
    ] == {"model": "m-1", "fingerprint": "fp"}
    assert SampleRecord(0, True).to_results()["answered_by"] is None


# -- second pass: comparisons --------------------------------------------------------------------


def test_one_paired_case_leaves_the_difference_anywhere() -> None:
    from pytest_llmjudge.gating.statistics import compare_paired

    assert compare_paired({"a": False}, {"a": True}).difference_ci == (-1.0, 1.0)
    # two cases alike have no spread
    assert compare_paired({"a": False, "b": False}, {"a": True, "b": True}).difference_ci == (1.0, 1.0)


def test_the_difference_interval_stays_within_minus_one_and_one() -> None:
    from pytest_llmjudge.gating.statistics import compare_paired

    # unclipped: −0.667 ± 0.653, +0.667 ± 0.653
    worse = compare_paired({"a": True, "b": True, "c": True}, {"a": False, "b": False, "c": True})
    assert worse.difference_ci == (-1.0, pytest.approx(-0.013345338487))
    better = compare_paired({"a": False, "b": False, "c": True}, {"a": True, "b": True, "c": True})
    assert better.difference_ci == (pytest.approx(0.013345338487), 1.0)


def test_a_comparison_stores_its_minimum_detectable_effect() -> None:
    from pytest_llmjudge.gating.statistics import compare_paired

    base = {f"c{i}": True for i in range(40)}
    found = compare_paired(base, {f"c{i}": i % 4 != 0 for i in range(40)}).to_dict()
    assert found["mde"] == pytest.approx(0.194254983779)
    assert compare_paired({"a": True}, {"a": True}).to_dict()["mde"] is None


# -- second pass: who judged -----------------------------------------------------------------------


def test_judges_with_as_many_verdicts_are_ordered_by_model_string_then_snapshot() -> None:
    from pytest_llmjudge.gating.drift import SeenJudge, judges_seen
    from pytest_llmjudge.gating.records import SampleRecord

    def record(case: str, model: str, snapshot: str, fingerprint: str | None) -> CaseRecord:
        sample = SampleRecord(0, True, answered_model=snapshot, answered_fingerprint=fingerprint)
        return CaseRecord("B", case, "pass", model=model, samples=(sample,))

    records = [
        record("c1", "b:x", "a-1", None),
        record("c2", "a:y", "z-1", "1f"),
        record("c3", "a:y", "z-1", None),
    ]
    # a fingerprint not known sorts first, also before one that starts with a digit
    assert judges_seen(records) == (
        SeenJudge("a:y", "z-1", None, 1),
        SeenJudge("a:y", "z-1", "1f", 1),
        SeenJudge("b:x", "a-1", None, 1),
    )


def test_counted_judges_with_as_many_verdicts_are_ordered_by_fingerprint() -> None:
    from pytest_llmjudge.gating.drift import SeenJudge
    from pytest_llmjudge.gating.judge_drift import judges_counted

    answers = [("a:m", "m-1", "fp_b"), ("a:m", "m-1", "fp_a"), ("a:m", "m-1", "1f"), ("a:m", "m-1", None)]
    assert judges_counted(answers) == (
        SeenJudge("a:m", "m-1", None, 1),
        SeenJudge("a:m", "m-1", "1f", 1),
        SeenJudge("a:m", "m-1", "fp_a", 1),
        SeenJudge("a:m", "m-1", "fp_b", 1),
    )


def test_verdicts_that_stay_pass_are_no_flip() -> None:
    from pytest_llmjudge.gating.judge_drift import drift_of

    def case(case_id: str, result: str) -> dict[str, object]:
        return {"id": case_id, "result": result, "calibration": False, "produced": {"text": "o"}}

    baseline = {
        "benchmarks": [{"code": "B", "cases": [case("a", "pass"), case("b", "pass"), case("c", "fail")]}]
    }
    (drift,) = drift_of(baseline, {"B": {"a": True, "b": True, "c": True}}, {})
    assert (drift.rejudged, drift.pass_to_fail, drift.fail_to_pass) == (3, 0, 1)


# -- second pass: pairwise figures and the calibration of a run ----------------------------------


def test_a_run_that_could_just_see_the_margin_clears_the_candidate() -> None:
    from pytest_llmjudge.gating.pairwise_stats import benchmark_figures

    # 60 ties: 6 of 60 discordant pairs would be significant, half of that a win rate of 0.05
    figures = benchmark_figures(["tie"] * 60, margin=0.05)
    assert (figures.mde, figures.verdict) == (0.05, "no significant difference")


def test_a_lower_bound_exactly_at_one_half_less_the_margin_is_non_inferior() -> None:
    from pytest_llmjudge.gating.pairwise_stats import benchmark_figures

    figures = benchmark_figures(["loss"] * 4, margin=0.5)
    assert (figures.win_rate_ci[0], figures.non_inferior) == (0.0, True)


def test_errored_and_skipped_cases_do_not_count_toward_the_corrected_rate() -> None:
    from pytest_llmjudge.gating.calibration_run import calibrate

    records = [
        CaseRecord("B", "l1", "pass", case_label="pass", judge_pass=True),
        CaseRecord("B", "l2", "fail", case_label="fail", judge_pass=False),
        CaseRecord("B", "u1", "pass"),
        CaseRecord("B", "u2", "fail"),
        CaseRecord("B", "u3", "error"),
        CaseRecord("B", "u4", "skip"),
    ]
    [found] = calibrate(records, None)
    assert (found.corrected.theta, found.corrected.low, found.corrected.high) == (0.5, 0.0, 1.0)


def test_a_benchmark_without_labels_minimums_or_a_stored_calibration_has_none(tmp_path: Path) -> None:
    from pytest_llmjudge.gating.calibration_run import calibrate
    from pytest_llmjudge.gating.records import JudgeFacts, JudgeFingerprint

    judge = JudgeFacts(fingerprint=JudgeFingerprint("openai:judge", {}, "d1", FINGERPRINT))
    records = [CaseRecord("B", "c1", "pass", judge=judge), CaseRecord("B", "c2", "fail", judge=judge)]
    assert calibrate(records, tmp_path) == []
