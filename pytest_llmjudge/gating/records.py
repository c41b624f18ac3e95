"""Per-case records: what one case item reported. Typed here; they travel in pytest reports,
also from xdist workers, as plain dicts (``asdict`` and ``CaseRecord.from_dict``)."""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from .panel_records import PanelRecord


@dataclass(frozen=True)
class SampleRecord:
    """One judge sample of a case (a results-file ``sample``)."""

    index: int
    passed: bool | None  # None: it errored
    reason: str = ""
    score: float | None = None
    uncertain: bool = False
    cached: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float | None = None
    error: str | None = None
    # cost: USD of this sample's calls in this run (None: its model has no known price); a cache
    # hit spent nothing, and ``saved_usd`` is what its call would cost now
    cached_input_tokens: int = 0
    cost_usd: float | None = 0.0
    saved_usd: float | None = None
    # the model that answered (the provider's resolved snapshot) and its serving fingerprint;
    # None: not known (an error, a code check, a verdict cached before it was recorded)
    answered_model: str | None = None
    answered_fingerprint: str | None = None
    model_latency_s: float | None = None  # what the server said it spent of latency_s (None: not said)

    def to_results(self) -> dict[str, Any]:
        answered = None
        if self.answered_model is not None:
            answered = {"model": self.answered_model, "fingerprint": self.answered_fingerprint}
        return {
            "index": self.index,
            "pass": self.passed,
            "reason": self.reason,
            "score": self.score,
            "uncertain": self.uncertain,
            "cached": self.cached,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "latency_s": self.latency_s,
            "model_latency_s": self.model_latency_s,
            "error": self.error,
            "cached_input_tokens": self.cached_input_tokens,
            "cost_usd": self.cost_usd,
            "saved_usd": self.saved_usd,
            "answered_by": answered,
        }


@dataclass(frozen=True)
class JudgeFingerprint:
    """What makes a judge this judge: calibrations are stored and looked up under ``fingerprint``."""

    model: str
    settings: dict[str, Any]
    instructions_digest: str
    fingerprint: str


@dataclass(frozen=True)
class JudgeFacts:
    """How a case's benchmark is judged (the same for every case of a benchmark)."""

    evaluator_type: str = "llm_judge"
    repeats: int = 1
    reduce: str = "majority"
    gate: str = "point"
    temperature: float | None = None
    fingerprint: JudgeFingerprint | None = None  # None when no judge decided the case
    instructions: str = ""
    rubric: str = ""


@dataclass(frozen=True)
class RequestText:
    """The case's own part of its compiled judge request, as sent."""

    input: str
    output: str
    expected: str


@dataclass(frozen=True)
class ProducedOutput:
    """The output a case was judged on, and where it came from (``case file``, ``task``, ``task cache``)."""

    source: str
    output: Any
    task: str | None = None
    fingerprint: str | None = None
    latency: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    # cost of the task call made for it in this run (0 from the case file, the output cache or a
    # Python task); None: the task's model has no known price
    cached_input_tokens: int = 0
    cost_usd: float | None = 0.0
    saved_usd: float | None = None  # from the output cache: its stored tokens at today's price
    # the model that answered the task call that produced it, ``{model, fingerprint}``
    # (``Answered.to_json``), from the output cache too; None: no model call, or not recorded
    answered_by: dict[str, Any] | None = None


@dataclass(frozen=True)
class PairAnswerRecord:
    """One order of a pairwise case (a results-file ``pairwise.answers[]``)."""

    order: str  # candidate_first | baseline_first
    candidate_position: str  # A | B
    winner: str | None  # A | B | tie (the majority of its samples); None: it errored
    reason: str = ""
    request_digest: str = ""
    sample_winners: tuple[str | None, ...] = ()  # each repeated sample's answer
    cached: bool = False  # every sample came from the verdict cache
    calls: int = 0  # model requests made, retries included
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float | None = None
    error: str | None = None
    cost_usd: float | None = 0.0  # USD of the calls made in this run (None: the model has no known price)

    def to_results(self) -> dict[str, Any]:
        return {
            "order": self.order,
            "candidate_position": self.candidate_position,
            "winner": self.winner,
            "reason": self.reason,
            "request_digest": self.request_digest,
            "sample_winners": list(self.sample_winners),
            "cached": self.cached,
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "latency_s": self.latency_s,
            "error": self.error,
            "cost_usd": self.cost_usd,
        }


@dataclass(frozen=True)
class PairwiseRecord:
    """How a pairwise case compared with its baseline output; the last four fields are its
    benchmark's, the same in each of its records (an xdist controller collects nothing)."""

    outcome: str | None  # win | loss | tie | inconsistent; None: unpaired, or an order errored
    identical: bool = False  # the outputs are the same: a tie with no judge call
    consistent: bool | None = None  # the judge answered alike in both orders; None: not asked both
    unpaired: bool = False  # no baseline output: never judged
    baseline_output: Any = None
    baseline_source: str | None = None  # case file | baseline results
    answers: tuple[PairAnswerRecord, ...] = ()
    baseline_only: tuple[str, ...] = ()  # baseline-run case ids this benchmark does not have
    gate: str | None = None  # pairwise_gate: non_inferior
    min_consistency: float | None = None
    baseline_note: str = ""  # the baseline as this benchmark saw it: names it, says why cases are unpaired

    def to_results(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "identical": self.identical,
            "consistent": self.consistent,
            "unpaired": self.unpaired,
            "baseline_output": self.baseline_output,
            "baseline_source": self.baseline_source,
            "answers": [a.to_results() for a in self.answers],
        }


@dataclass(frozen=True)
class CaseRecord:
    """What one case item reported (travels in pytest reports, also across xdist workers)."""

    benchmark: str
    case: str
    result: str  # pass | fail | error | skip
    nodeid: str = ""
    label: str = ""
    threshold: float | None = None
    criticality: str = "threshold_gate"
    weight: float = 1.0
    parent_rubric: str | None = None
    location: str = ""
    uncertain: bool = False
    reason: str = ""
    score: float | None = None
    model: str = ""
    prompt_hash: str = ""
    cached: bool = False
    attempts: int = 0
    benchmark_cases: int = 0  # cases of its benchmark as collected: a partial run's gate says so
    retried: tuple[str, ...] = ()  # the failure kind of each retried attempt
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    # judge calibration: whether the item is a calibration case (judged, not gated), the judge's
    # own verdict and the benchmark's trust minimums
    calibration: bool = False
    judge_pass: bool | None = None
    min_tpr: float | None = None
    min_tnr: float | None = None
    min_labels: int | None = None
    case_label: str | None = None  # the human label of the case, if any
    flaky: bool = False  # repeated samples disagree
    stability: float | None = None  # share of samples agreeing with the verdict
    samples: tuple[SampleRecord, ...] = ()  # each judge sample
    judge: JudgeFacts | None = None
    request: RequestText | None = None
    produced: ProducedOutput | None = None  # the output judged, and where it came from
    pairwise: PairwiseRecord | None = None  # pairwise mode: the comparison with the baseline output
    # cost (cost.pricing): USD of the calls this case made in this run, its samples' and its
    # task's (None: one went to a model with no known price), and what its cache hits saved
    cost_usd: float | None = 0.0
    saved_usd: float = 0.0
    budget_stopped: bool = False  # an ERROR because the run's budget was reached before its call
    # calls whose server reported no usage (their tokens estimated from characters), and calls
    # that reported more tokens than any model's context holds (counted as reported)
    usage_estimated: int = 0
    usage_implausible: int = 0
    panel: PanelRecord | None = None  # a panel's case: each member's verdict and the vote

    @property
    def needs_review(self) -> bool:
        """A person should decide the case: the judge was uncertain, or the panel split on it
        (and decided it: too few answers is an ERROR, shown as one)."""
        panel = self.panel
        return self.uncertain or (panel is not None and panel.split and panel.decision != "error")

    def to_dict(self) -> dict[str, Any]:
        """The record as plain values, as ``dataclasses.asdict`` makes it, without its deep copy of
        every value (a quarter of a cached run's time at 1,000 cases): records are never changed."""
        return _plain(self)  # type: ignore[no-any-return]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseRecord:
        """The record of ``to_dict`` (as it arrives from an xdist worker)."""
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["samples"] = tuple(_typed(SampleRecord, s) for s in known.get("samples", ()))
        known["retried"] = tuple(known.get("retried", ()))
        for name, kind in (("judge", JudgeFacts), ("request", RequestText), ("produced", ProducedOutput)):
            if known.get(name) is not None:
                known[name] = _typed(kind, known[name])
        if isinstance(known.get("pairwise"), dict):
            pair = dict(known["pairwise"])
            pair["answers"] = tuple(_typed(PairAnswerRecord, a) for a in pair.get("answers", ()))
            pair["baseline_only"] = tuple(pair.get("baseline_only", ()))
            known["pairwise"] = _typed(PairwiseRecord, pair)
        if isinstance(known.get("panel"), dict):
            known["panel"] = PanelRecord.from_dict(known["panel"])
        return cls(**known)


def _plain(value: Any) -> Any:
    """``value`` with each dataclass in it as a dict of its fields (shallow elsewhere)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {name: _plain(item) for name, item in vars(value).items()}
    if isinstance(value, tuple | list):
        return type(value)(_plain(item) for item in value)
    return value


def _typed(kind: type[Any], value: Any) -> Any:
    """A dataclass of ``kind`` from its ``asdict`` form (nested ones too); an instance as it is."""
    if is_dataclass(value):
        return value
    values = {}
    for item in fields(kind):
        if item.name not in value:
            continue
        inner = value[item.name]
        if item.name == "fingerprint" and kind is JudgeFacts and isinstance(inner, dict):
            inner = _typed(JudgeFingerprint, inner)
        values[item.name] = inner
    return kind(**values)
