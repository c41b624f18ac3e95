"""The results file (format 2) as a typed model: what the reader accepts, and the JSON Schema
``llmjudge schema results`` prints (generated from these classes, shipped as
``pytest_llmjudge/schemas/results.schema.json``).

Every object forbids keys it does not name, as the reader always has; a key marked "absent in
files of earlier versions" has a default and is not required. The shared value kinds (a rate, an
interval, a time in UTC) are ``$defs`` of their own, written by hand: JSON Schema's bounds let
NaN through, and these refuse it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema
from pydantic.json_schema import GenerateJsonSchema

FORMAT = 2  # ``results_file.FORMAT``, which a test keeps equal to the schema's const

SCHEMA_ID = "https://pytest-llmjudge.invalid/results.schema.json"
_NOT_NAN = {"x-ref": "not_nan"}  # a placeholder for ``$ref``: pydantic resolves those it sees


def _ref(name: str) -> WithJsonSchema:
    return WithJsonSchema({"x-ref": name})


Count = Annotated[int, Field(ge=0), _ref("count")]
Rate = Annotated[float | None, Field(ge=0, le=1), _ref("rate")]
Interval = Annotated[tuple[float, float] | None, _ref("interval")]
Usd = Annotated[float, Field(ge=0), _ref("usd")]
UsdOrNull = Annotated[float | None, Field(ge=0), _ref("usd_or_null")]
Digest = Annotated[str, Field(pattern="^[0-9a-f]{12,}$"), _ref("digest")]
UtcTime = Annotated[str, _ref("utc_time")]
Latency = Annotated[
    float | None, Field(ge=0), WithJsonSchema({"type": ["number", "null"], "minimum": 0, **_NOT_NAN})
]
Verdict = Literal["pass", "fail"]
GateRule = Literal["point", "lower_bound", "corrected", "corrected_lower_bound", "pairwise"]
Winner = Literal["A", "B", "tie"] | None

SHARED_DEFS: dict[str, Any] = {
    "utc_time": {
        "type": "string",
        "format": "date-time",
        "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|\\+00:00)$",
        "description": "ISO-8601 time in UTC, a real date (load_results checks what a pattern cannot).",
    },
    "digest": {"type": "string", "pattern": "^[0-9a-f]{12,}$"},
    "count": {"type": "integer", "minimum": 0},
    "not_nan": {
        "not": {"type": "number", "minimum": 1, "maximum": 0},
        "description": "Refuses NaN: no number is at least 1 and at most 0, but NaN passes every bound "
        "(its comparisons are false), so a bounded number also refers to this.",
    },
    "rate": {"type": ["number", "null"], "minimum": 0, "maximum": 1, **_NOT_NAN},
    "interval": {
        "oneOf": [
            {"type": "null"},
            {
                "type": "array",
                "prefixItems": [{"type": "number", **_NOT_NAN}, {"type": "number", **_NOT_NAN}],
                "minItems": 2,
                "maxItems": 2,
            },
        ]
    },
    "usd": {"type": "number", "minimum": 0, **_NOT_NAN},
    "usd_or_null": {
        "oneOf": [{"type": "null"}, {"x-ref": "usd"}],
        "description": "US dollars; null when a call went to a model with no known price "
        "(its tokens are counted).",
    },
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Settings(_Strict):
    repeats: Annotated[int, Field(ge=1)]
    gate: GateRule
    margin: Annotated[float, Field(ge=0), WithJsonSchema({"type": "number", "minimum": 0, **_NOT_NAN})]
    alpha: Annotated[
        float,
        Field(gt=0, lt=1),
        WithJsonSchema({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, **_NOT_NAN}),
    ]
    fail_on: str | None
    baseline: str | None


class Unpriced(_Strict):
    model: str
    reason: str


class Cost(_Strict):
    usd: UsdOrNull
    priced_usd: Annotated[Usd, Field(description="The calls to models with a price.")]
    saved_usd: Annotated[Usd, Field(description="What the cache hits would cost now.")]
    unpriced: list[Unpriced]


class Totals(_Strict):
    cases: Count
    passed: Count
    failed: Count
    errors: Count
    skipped: Count
    flaky: Count
    calls: Count
    cache_hits: Count
    input_tokens: Count
    output_tokens: Count
    cost: Cost | None = Field(
        None, description="What the run's calls cost. Absent in files of earlier versions."
    )


class Judge(_Strict):
    model: str
    settings: dict[str, Any] = Field(
        description="Model settings sent with every call (provider keys, kept as given)."
    )
    instructions_digest: Digest
    fingerprint: Digest


class BenchmarkRequest(_Strict):
    instructions: str
    rubric: str


class Gate(_Strict):
    status: Literal["pass", "fail", "partial", "no verdicts", "untrusted", "not scored"]
    cases: Count
    passed: Count
    failed: Count
    errors: Count
    skipped: Count
    review: Count
    flaky: Count
    pass_rate: Rate
    ci_low: Rate
    ci_high: Rate
    interval_method: Literal["wilson", "cluster"] | None
    basis: Literal["cases"] | None = Field(
        None,
        description="What pass_rate and its interval count: each case's verdict once (repeated samples "
        "reduced first). Absent in older files, whose cluster interval counted samples.",
    )
    collected: Count | None = Field(
        None,
        description="The benchmark's cases at collection (more than 'cases' when a selection ran some); "
        "absent in files of earlier versions.",
    )
    low_evidence: bool
    detail: str


class Calibration(_Strict):
    tp: Count
    fn: Count
    tn: Count
    fp: Count
    tpr: Rate
    tpr_ci: Interval
    tnr: Rate
    tnr_ci: Interval
    balanced_accuracy: Rate
    kappa: Annotated[
        float | None,
        Field(ge=-1, le=1),
        WithJsonSchema({"type": ["number", "null"], "minimum": -1, "maximum": 1, **_NOT_NAN}),
    ]
    n_labels: Count
    corrected_pass_rate: Rate
    corrected_ci: Interval
    chance: bool
    trusted: bool | None
    detail: str
    source: Literal["run", "stored"]
    stored_labels: Count | None = None


class CaseRequest(_Strict):
    input: str
    output: str
    expected: str


class Produced(_Strict):
    source: Literal["case file", "task", "task cache"]
    output: Any = Field(description="The output: a string or a JSON value, as the task returned it.")
    task: str | None = Field(description="The task's label: its import path (@task_version), or its model.")
    fingerprint: Digest | None
    latency: Latency
    input_tokens: Count
    output_tokens: Count
    cached_input_tokens: Count = 0
    cost_usd: UsdOrNull = 0.0
    saved_usd: Usd | None = None
    answered_by: AnsweredBy | None = Field(
        None,
        description="The model that answered the task call that produced this output and its serving "
        "fingerprint (an output from the output cache: the call that filled it); null for an output from "
        "the case file or a Python task, or when not recorded (absent in files of earlier versions).",
    )


class AnsweredBy(_Strict):
    model: str
    fingerprint: str | None


class SeenJudge(_Strict):
    requested: str
    model: str
    fingerprint: str | None
    verdicts: Count


class Sample(_Strict):
    index: Count
    pass_: bool | None = Field(alias="pass")
    reason: str
    score: float | None
    uncertain: bool
    cached: bool
    input_tokens: Count
    output_tokens: Count
    latency_s: Latency
    model_latency_s: Latency = Field(
        None,
        description="Of latency_s, what the judge's server said it spent (its openai-processing-ms "
        "header); null when it did not say. Absent in files of earlier versions.",
    )
    error: str | None
    cached_input_tokens: Count = 0
    cost_usd: UsdOrNull = 0.0
    saved_usd: Usd | None = None
    answered_by: AnsweredBy | None = Field(
        None, description="The model that answered and its serving fingerprint; null when not known."
    )


class PairwiseAnswer(_Strict):
    order: Literal["candidate_first", "baseline_first"]
    candidate_position: Literal["A", "B"]
    winner: Winner
    reason: str
    request_digest: Digest
    sample_winners: list[Winner]
    cached: bool
    calls: Count
    input_tokens: Count
    output_tokens: Count
    latency_s: Latency
    error: str | None
    cost_usd: Latency


class PairwiseCase(_Strict):
    outcome: Literal["win", "loss", "tie", "inconsistent"] | None
    identical: bool
    consistent: bool | None
    unpaired: bool
    baseline_output: Any = Field(description="The output compared with: a string or a JSON value.")
    baseline_source: Literal["case file", "baseline results"] | None
    answers: list[PairwiseAnswer] = Field(
        description="One per order asked; a panel's case: each member's two, member by member."
    )


class PanelMember(_Strict):
    model: str
    pass_: bool | None = Field(alias="pass", description="Its samples reduced; null: it errored.")
    reason: str
    error: str | None
    cached: bool
    samples: Count
    input_tokens: Count
    output_tokens: Count
    outcome: Literal["win", "loss", "tie", "inconsistent"] | None = Field(
        default=None,
        description="Pairwise mode: the candidate's outcome by this member's two answers "
        "(its pass: not a loss); null when judged case by case, or it errored.",
    )


class PanelCase(_Strict):
    rule: Literal["majority", "unanimous", "any"]
    min_members: Count
    decision: Literal["pass", "fail", "uncertain", "error"]
    split: bool = Field(description="The members that answered disagree: the case is in the review file.")
    members: list[PanelMember]


class Case(_Strict):
    id: Annotated[str, Field(min_length=1)]
    nodeid: str
    location: str
    calibration: bool
    request_digest: str
    label: Verdict | None
    result: Literal["pass", "fail", "error", "skip"]
    reason: str
    score: float | None
    uncertain: bool
    flaky: bool
    stability: Rate
    request: CaseRequest | None
    samples: list[Sample]
    produced: Produced | None = Field(
        description="The candidate output judged and where it came from; null in files of format 1."
    )
    pairwise: PairwiseCase | None = Field(
        None,
        description="Pairwise mode: the case's output against its baseline output, both orders; null when "
        "judged alone, absent in files of earlier versions.",
    )
    cost_usd: UsdOrNull = Field(
        0.0,
        description="The case's calls in this run: its samples' and its task's. "
        "Absent in files of earlier versions.",
    )
    saved_usd: Usd = Field(0.0, description="What its cache hits would cost now.")
    panel: PanelCase | None = Field(
        None,
        description="A panel of judges decided the case: its rule and each member's verdict; null when one "
        "judge did, absent in files of earlier versions.",
    )


class UnpairedCases(_Strict):
    baseline_only: list[str]
    candidate_only: list[str]


class PairwiseBenchmark(_Strict):
    wins: Count
    ties: Count
    losses: Count
    inconsistent: Count
    unpaired: Count
    n: Count
    win_rate: Rate
    win_rate_ci: Interval
    win_rate_ci_method: Literal["wilson, ties as half"]
    p_value: Rate
    p_adjusted: Rate
    verdict: Literal["better", "worse", "no significant difference", "inconclusive"]
    mde: Latency
    judged: Count
    position_consistency: Rate
    non_inferior: bool
    gate: Literal["non_inferior"] | None
    min_consistency: Rate
    unpaired_cases: UnpairedCases


class PanelMemberRate(_Strict):
    model: str
    passes: Count
    answered: Count
    errors: Count
    pass_rate: Rate


class PanelPair(_Strict):
    first: str
    second: str
    cases: Count = Field(description="Cases both answered.")
    agreed: Count
    kappa: float | None = Field(description="Cohen's kappa; null where undefined (every vote alike).")
    correlation: float | None = Field(description="Pearson's phi of their 0/1 votes; null where undefined.")


class PanelBenchmark(_Strict):
    cases: Count
    split_cases: Count
    members: list[PanelMemberRate]
    pairs: list[PanelPair]
    fleiss_kappa: float | None
    fleiss_cases: Count = Field(description="Cases every member answered (Fleiss' kappa's).")
    mean_correlation: float | None
    effective_judges: float | None = Field(
        description="n / (1 + (n - 1) * mean_correlation), the correlation clipped to [0, 1]."
    )


class TrustMinimums(_Strict):
    min_tpr: Rate
    min_tnr: Rate
    min_labels: Count | None


class Benchmark(_Strict):
    code: Annotated[str, Field(min_length=1)]
    label: str
    threshold: Rate
    criticality: Literal["hard_gate", "threshold_gate"]
    weight: Annotated[float, Field(ge=0), WithJsonSchema({"type": "number", "minimum": 0, **_NOT_NAN})]
    parent_rubric: str | None
    evaluator_type: Literal["code", "llm_judge", "hybrid", "manual_sme"]
    judge: Judge | None
    repeats: Annotated[int, Field(ge=1)]
    reduce: Literal["majority", "all", "any", "mean"]
    gate_rule: GateRule
    request: BenchmarkRequest | None
    gate: Gate
    calibration: Calibration | None
    judges: list[SeenJudge] = Field(
        default_factory=list,
        description="The judge identities that answered its samples, most verdicts first; absent in files "
        "of earlier versions.",
    )
    trust: TrustMinimums | None = Field(
        None,
        description="The benchmark's calibration minimums (judge: min_tpr, min_tnr, min_labels); "
        "absent in files of earlier versions.",
    )
    cases: list[Case] = Field(
        description="Case ids are unique among the release cases and among the calibration cases "
        "(load_results checks it; a schema cannot)."
    )
    pairwise: PairwiseBenchmark | None = Field(
        None,
        description="Pairwise mode: the comparison of this run's outputs with the baseline's; null when "
        "judged case by case, absent in files of earlier versions.",
    )
    cost: Cost | None = Field(
        None, description="What the benchmark's calls cost. Absent in files of earlier versions."
    )
    panel: PanelBenchmark | None = Field(
        None,
        description="A panel of judges: each member's pass rate and how the members agreed over the "
        "gated cases; null for one judge, absent in files of earlier versions.",
    )


class Rubric(_Strict):
    code: Annotated[str, Field(min_length=1)]
    label: str
    aggregation: Literal["WEIGHTED_AVERAGE", "MEAN", "MINIMUM", "MAXIMUM"]
    benchmarks: list[str]
    score: float | None
    threshold: float | None
    status: Literal["pass", "fail", "incomplete", "error", "not scored"]
    detail: str


class Comparison(_Strict):
    benchmark: str
    baseline_pass_rate: Rate
    candidate_pass_rate: Rate
    difference: Annotated[
        float | None,
        Field(ge=-1, le=1),
        WithJsonSchema({"type": ["number", "null"], "minimum": -1, "maximum": 1, **_NOT_NAN}),
    ]
    difference_ci: Interval
    b: Annotated[Count, Field(description="Paired cases that passed in the baseline and fail now.")]
    c: Annotated[Count, Field(description="Paired cases that failed in the baseline and pass now.")]
    p_value: Rate
    p_adjusted: Rate
    verdict: Literal["regression", "improvement", "no significant change", "inconclusive", "judge changed"]
    unpaired: UnpairedCases
    mde: Annotated[
        Latency,
        Field(
            description="Smallest difference this run could detect; null when none could reach significance."
        ),
    ]
    n_paired: Count
    judge_change: str | None = Field(
        None,
        description="How the judge differs from the baseline's (model string, snapshot, or fingerprint "
        "alone), naming both; null when the same. Absent in files of earlier versions.",
    )


class CallLatency(_Strict):
    calls: Count = Field(description="Judge calls made in this run (cache hits make none).")
    wall_median_s: Latency = Field(description="Median wall time of a call, as the plugin saw it.")
    server_timed: Count = Field(description="Calls whose server said what it spent.")
    server_median_s: Latency = Field(description="Median time the server said it spent; null: none said.")
    overhead_median_s: float | None = Field(
        description="Median of each server-timed call's wall time less its server's time: what the "
        "plugin, the SDKs and the network add; null when no server said."
    )


class Flip(_Strict):
    benchmark: str
    case: str
    baseline: Verdict
    candidate: Verdict


class JudgeDriftRow(_Strict):
    """One benchmark's baseline outputs judged again by this run's judge (--llmjudge-rejudge-baseline)."""

    benchmark: str
    rejudged: Annotated[int, Field(ge=0)] = Field(description="Baseline verdicts judged again.")
    pass_to_fail: Annotated[int, Field(ge=0)] = Field(description="Baseline passes the judge now fails.")
    fail_to_pass: Annotated[int, Field(ge=0)] = Field(description="Baseline fails the judge now passes.")
    p_value: Annotated[float, Field(ge=0, le=1)] = Field(description="Exact McNemar p of the flips.")
    baseline_judges: str = Field(description="Who gave the baseline's verdicts (empty: not known).")
    judge: str = Field(description="Who gave the new verdicts (empty: not known).")


class ResultsFile(_Strict):
    """One judged run: settings, totals, gates per benchmark and rubric, every case and judge
    sample, calibration against human labels and the comparison with a baseline run."""

    format: Annotated[Literal[2], WithJsonSchema({"const": FORMAT})] = Field(
        description="Version of this file format."
    )
    started: UtcTime
    finished: UtcTime
    plugin_version: str
    pydantic_ai_version: str
    command: list[str] = Field(description="The pytest command line, argv strings.")
    commit: str | None = Field(description="Git commit of the rootdir, null outside a repository.")
    rootdir: str
    suite_digest: Digest
    exit_status: Annotated[int, Field(ge=0)]
    exit_reasons: list[str]
    settings: Settings
    totals: Totals
    call_latency: CallLatency | None = Field(
        None,
        description="The judge calls' latency; null when the run called no judge. Absent in files "
        "of earlier versions.",
    )
    benchmarks: list[Benchmark] = Field(
        description="Benchmark codes are unique (load_results checks it; a schema cannot)."
    )
    rubrics: list[Rubric]
    comparison: list[Comparison] | None
    flips: list[Flip] | None
    judge_drift: list[JudgeDriftRow] | None = Field(
        None,
        description="--llmjudge-rejudge-baseline: per benchmark, how many of the baseline's verdicts "
        "flipped when its stored outputs were judged again by this run's judge; null otherwise. "
        "Absent in files of earlier versions.",
    )


class _NoTitles(GenerateJsonSchema):
    """Property titles would only repeat the key names."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def _refs(node: Any) -> Any:
    """``node`` with each ``x-ref`` placeholder as the ``$ref`` it stands for."""
    if isinstance(node, list):
        return [_refs(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        ("$ref" if key == "x-ref" else key): (f"#/$defs/{value}" if key == "x-ref" else _refs(value))
        for key, value in node.items()
    }


def results_schema() -> dict[str, Any]:
    """The JSON Schema of the results file, generated from ``ResultsFile``."""
    body = ResultsFile.model_json_schema(by_alias=True, schema_generator=_NoTitles, mode="serialization")
    definitions = {**SHARED_DEFS, **body.pop("$defs", {})}
    for definition in definitions.values():
        definition.pop("title", None)
    body.pop("title", None)
    body, definitions = _refs(body), _refs(definitions)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"pytest-llmjudge results file, format {FORMAT}",
        "description": (
            "One judged run: settings, totals, gates per benchmark and rubric, every case and judge sample, "
            "calibration against human labels and the comparison with a baseline run. Documented in "
            "docs/results.md."
        ),
        **{k: v for k, v in body.items() if k != "description"},
        "$defs": definitions,
    }
