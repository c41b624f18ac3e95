"""The file format: pydantic models at the file boundary, loaded into frozen runtime values.

Everything a user writes passes through here. Validation errors become ``SpecError``s that
point at the offending line, with the nearest known key or value suggested for typos.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from .errors import Location, SpecError
from .jsonl import json_lines
from .panel_spec import check_panel
from .reading import check_regular_file, read_regular_file, resolve_in_root
from .task_spec import TaskField
from .text import shown
from .validation import HINT_SEPARATOR, validation_error
from .vocabulary import GateRule, PanelRule, Reduce
from .yamlsrc import Sourced, decode, load_yaml

CODE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
PROMPT_ITEM = "prompt"  # the name of each benchmark's prompt item, so no case may use it


def _not_yes_no(value: Any) -> Any:
    # YAML reads yes/no/true/false as booleans, which pydantic would silently turn into 1.0 / 0.0.
    if isinstance(value, bool):
        raise ValueError("expected a number from 0 to 1, not a yes/no value")
    return value


Fraction = Annotated[float, BeforeValidator(_not_yes_no), Field(ge=0.0, le=1.0)]
Text = str | list[str]
JsonValue = str | int | float | bool | dict[str, Any] | list[Any]
PromptStyle = Literal["no_reasoning", "short_cot", "long_cot"]
EvaluatorType = Literal["code", "llm_judge", "hybrid", "manual_sme"]
M = TypeVar("M", bound=BaseModel)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScoringScale(_Strict):
    min_value: float | None = None
    max_value: float | None = None
    normalization_formula: str | None = None
    descriptions: dict[float, str] | None = None


class PanelMemberSpec(_Strict):
    """A panel judge with its own server: ``{model: M, base_url: URL}``."""

    model: Annotated[str, Field(min_length=1)]
    base_url: str | None = None


class JudgeSettings(_Strict):
    """Per-benchmark judge overrides (``judge:`` in a benchmark file)."""

    model: str | None = None
    base_url: str | None = None
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] | None = None
    max_tokens: Annotated[int, Field(gt=0)] | None = None
    timeout: Annotated[float, Field(gt=0)] | None = None
    prompt_style: PromptStyle | None = None
    repeats: Annotated[int, Field(ge=1)] | None = None
    reduce: Reduce | None = None
    gate: GateRule | None = None
    min_tpr: Fraction | None = None
    min_tnr: Fraction | None = None
    min_labels: Annotated[int, Field(ge=0)] | None = None
    mode: Literal["single", "pairwise"] | None = None  # pairwise: candidate against baseline output
    min_consistency: Fraction | None = None  # pairwise: least position consistency to trust the judge
    # a panel of judges instead of one: model strings, or {model, base_url}; see suite.panel_spec
    panel: list[Annotated[str, Field(min_length=1)] | PanelMemberSpec] | None = None
    panel_rule: PanelRule | None = None
    min_members: Annotated[int, Field(ge=1)] | None = None
    # true: this benchmark's judge calls go through the provider's batch API (--llmjudge-batch)
    batch: bool | None = None


class CheckSpec(_Strict):
    """A deterministic check for ``code`` and ``hybrid`` benchmarks."""

    type: Literal["contains", "equals", "equals_expected", "is_instance", "python"]
    value: Any = None
    case_sensitive: bool = True
    function: str | None = None


class CaseSpec(_Strict):
    id: Annotated[str, Field(pattern=CODE_PATTERN)]
    source_narrative: str | None = None
    ground_truth: JsonValue | None = None
    candidate_output: JsonValue | None = None  # None: the benchmark's task produces it
    baseline_output: JsonValue | None = None  # pairwise mode: the output the candidate is compared with
    inputs: dict[str, Any] | None = None
    label: Literal["pass", "fail"] | None = None
    metadata: dict[str, Any] | None = None

    @field_validator("candidate_output", mode="before")
    @classmethod
    def _written_output(cls, value: Any) -> Any:
        # an empty ``candidate_output:`` is a mistake; a case whose task produces it leaves the key out
        if value is None:
            raise ValueError(
                "expected a string, a number, true or false, a mapping or a list (got None)"
                f"{HINT_SEPARATOR}write a value after 'candidate_output:', or leave the key out "
                "when the benchmark's task produces it"
            )
        return value


class BenchmarkSpec(_Strict):
    code: Annotated[str, Field(pattern=CODE_PATTERN)]
    parent_rubric: str | None = None
    label: str | None = None
    concept: str | None = None
    weight: Fraction = 1.0
    threshold: Fraction | None = None
    criticality: Literal["hard_gate", "threshold_gate"] = "threshold_gate"
    scoring_scale: ScoringScale | None = None
    inclusion_criteria: Text | None = None
    exclusion_criteria: Text | None = None
    examples: list[str] | None = None
    evaluator_type: EvaluatorType = "llm_judge"
    llm_prompt_file: str | None = None
    metric: dict[str, Any] | None = None
    notes: str | None = None
    cases: list[CaseSpec] | None = None
    cases_file: str | None = None
    calibration_file: str | None = None
    no_cases: bool = False
    judge: JudgeSettings | None = None
    checks: list[CheckSpec] | None = None
    task: TaskField | None = None
    task_version: str | None = None
    task_sees_ground_truth: bool = False
    pairwise_gate: Literal["non_inferior"] | None = None  # pairwise: the win rate's lower bound gates

    @field_validator("inclusion_criteria", "exclusion_criteria")
    @classmethod
    def _strip(cls, value: Text | None) -> Text | None:
        return value.strip() if isinstance(value, str) else value


class EvaluationGuidelines(_Strict):
    focus_areas: list[str] | None = None
    acceptable_deviations: list[str] | None = None
    critical_requirements: list[str] | None = None
    evidence_requirements: str | None = None
    special_instructions: str | None = None


class RubricSpec(_Strict):
    code: Annotated[str, Field(pattern=CODE_PATTERN)]
    label: str | None = None
    description: str | None = None
    weight: Fraction = 1.0
    aggregation_method: Literal["WEIGHTED_AVERAGE", "MINIMUM", "MAXIMUM", "MEAN"] = "WEIGHTED_AVERAGE"
    passing_threshold: Fraction | None = None
    benchmarks: list[str]
    evaluation_guidelines: EvaluationGuidelines | None = None


@dataclass(frozen=True)
class Case:
    """One case to judge; ``line`` is where it starts in its file."""

    spec: CaseSpec
    location: Location

    @property
    def id(self) -> str:
        return self.spec.id


@dataclass(frozen=True)
class Benchmark:
    spec: BenchmarkSpec
    location: Location
    cases: tuple[Case, ...]
    prompt_path: Path | None
    calibration_cases: tuple[Case, ...] = ()  # labelled, judged and reported, not gated
    parent_rubric_location: Location | None = None
    judge_model_location: Location | None = None
    task_location: Location | None = None

    @property
    def code(self) -> str:
        return self.spec.code


@dataclass(frozen=True)
class Rubric:
    spec: RubricSpec
    location: Location
    benchmark_locations: tuple[Location, ...] = ()  # of each entry of ``benchmarks``


def read_text(path: Path, display: str) -> str:
    """UTF-8 text of a regular file; anything else raises ``SpecError`` (``read_regular_file``)."""
    return decode(read_regular_file(path, display), display)


def read_yaml(path: Path, display: str) -> Sourced:
    """Read and parse a YAML file, naming ``display`` in errors."""
    return load_yaml(read_text(path, display), display)


def _mapping(doc: Sourced, what: str) -> dict[str, Any]:
    if doc.data is None:
        raise SpecError(
            doc.where(()), "", "file is empty", f"a {what} file is a YAML mapping with a 'code' key"
        )
    if not isinstance(doc.data, dict):
        kind = type(doc.data).__name__
        raise SpecError(
            doc.where(()),
            "",
            f"expected a mapping of fields, got a {kind}",
            f"a {what} file starts with 'code: ...'",
        )
    return doc.data


def _validate(model: type[M], data: Any, doc: Sourced, prefix: tuple[str | int, ...] = ()) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, model, doc, prefix) from None


def load_benchmark(path: Path, display: str, rootdir: Path, allow_outside: bool = False) -> Benchmark:
    """Load and validate one benchmark file with its cases and prompt path.

    Files it names (``llm_prompt_file``, ``cases_file``) must be regular files inside
    ``rootdir``, after symlinks are resolved, unless ``allow_outside``.
    """
    doc = read_yaml(path, display)
    data = _mapping(doc, "benchmark")
    spec = _validate(BenchmarkSpec, data, doc)
    cases: list[Case] = []
    for i, case in enumerate(spec.cases or ()):
        cases.append(Case(case, doc.where(("cases", i))))
    if spec.cases_file is not None:
        cases.extend(_load_cases_file(spec.cases_file, doc.where(("cases_file",)), rootdir, allow_outside))
    _check_unique_ids(cases)
    _check_case_count(spec, data, doc, len(cases))
    prompt_path = None
    if spec.llm_prompt_file is not None:
        at = doc.where(("llm_prompt_file",))
        resolved = resolve_in_root(
            spec.llm_prompt_file, rootdir, at=at, field="llm_prompt_file", allow_outside=allow_outside
        )
        check_regular_file(
            resolved, spec.llm_prompt_file, label="prompt file", at=at, field="llm_prompt_file"
        )
        prompt_path = rootdir / spec.llm_prompt_file
    elif spec.evaluator_type in {"llm_judge", "hybrid"} and not (spec.concept or spec.inclusion_criteria):
        raise SpecError(
            doc.where(("evaluator_type",)),
            "llm_prompt_file",
            f"evaluator_type '{spec.evaluator_type}' needs a rubric",
            "add 'llm_prompt_file:', or build the rubric from 'concept:' and 'inclusion_criteria:'",
        )
    if spec.judge and spec.judge.mode == "pairwise" and spec.evaluator_type != "llm_judge":
        raise SpecError(
            doc.where(("judge", "mode")),
            "judge.mode",
            f"pairwise mode compares outputs with a judge; evaluator_type is '{spec.evaluator_type}'",
            "use 'evaluator_type: llm_judge', or remove 'mode: pairwise'",
        )
    if spec.evaluator_type in {"code", "hybrid"} and cases and not spec.checks:
        raise SpecError(
            doc.where(("evaluator_type",)),
            "checks",
            f"evaluator_type '{spec.evaluator_type}' has cases but no deterministic checks",
            "add a 'checks:' list (contains, equals, equals_expected, is_instance, python)",
        )
    check_panel(spec.judge, doc.where)
    calibration = _load_calibration_cases(spec, doc, rootdir, allow_outside)
    parent = doc.where(("parent_rubric",)) if spec.parent_rubric else None
    model_at = doc.where(("judge", "model")) if spec.judge and spec.judge.model else None
    task_at = doc.where(("task",)) if spec.task is not None else None
    return Benchmark(
        spec, doc.where(("code",)), tuple(cases), prompt_path, calibration, parent, model_at, task_at
    )


def _load_calibration_cases(
    spec: BenchmarkSpec, doc: Sourced, rootdir: Path, allow_outside: bool
) -> tuple[Case, ...]:
    """The cases of ``calibration_file``: each needs a human ``label``; ids are unique among them."""
    if spec.calibration_file is None:
        return ()
    at = doc.where(("calibration_file",))
    cases = _load_cases_file(spec.calibration_file, at, rootdir, allow_outside, "calibration_file")
    for case in cases:
        if case.spec.label is None:
            raise SpecError(
                case.location,
                "label",
                f"calibration case '{case.id}' has no human label",
                "add 'label: pass' or 'label: fail' (calibration cases measure the judge against it)",
            )
    _check_unique_ids(cases)
    return tuple(cases)


def _check_case_count(spec: BenchmarkSpec, data: dict[str, Any], doc: Sourced, count: int) -> None:
    """A gate over cases that were named but hold none would pass unseen (``no_cases`` says so)."""
    if spec.no_cases and count:
        raise SpecError(
            doc.where(("no_cases",)),
            "no_cases",
            f"'no_cases: true' but {spec.code} has {count} case{'s' if count > 1 else ''}",
            "remove 'no_cases: true', or the cases",
        )
    named = spec.cases_file is not None or "cases" in data
    gated = spec.threshold is not None or spec.criticality == "hard_gate"
    if not named or count or not gated or spec.no_cases:
        return
    gate = "a hard gate" if spec.criticality == "hard_gate" else f"gated at threshold {spec.threshold:g}"
    if spec.cases_file is not None:
        key, what = "cases_file", f"cases file {shown(spec.cases_file)} holds no cases"
    else:
        key, what = "cases", "'cases' lists no cases"
    raise SpecError(
        doc.where((key,)),
        key,
        f"{what}, and {spec.code} is {gate}: its gate would pass with nothing judged",
        "add cases, or write 'no_cases: true' if the benchmark has none on purpose",
    )


def _check_unique_ids(cases: list[Case]) -> None:
    seen: dict[str, Case] = {}
    for case in cases:
        if case.id == PROMPT_ITEM:
            raise SpecError(
                case.location,
                "id",
                f"case id '{PROMPT_ITEM}' is reserved (the benchmark's prompt item)",
                "rename the case",
            )
        if case.id in seen:
            first = seen[case.id].location
            raise SpecError(
                case.location,
                "id",
                f"duplicate case id '{case.id}' (first at {first})",
                "case ids must be unique within a benchmark",
            )
        seen[case.id] = case


def load_cases(relative: str, at: Location, rootdir: Path, allow_outside: bool, field: str) -> list[Case]:
    """The cases of a JSONL or YAML file named at ``at`` (few-shot ``examples_file``)."""
    return _load_cases_file(relative, at, rootdir, allow_outside, field)


def _load_cases_file(
    relative: str, at: Location, rootdir: Path, allow_outside: bool, field: str = "cases_file"
) -> list[Case]:
    path = resolve_in_root(relative, rootdir, at=at, field=field, allow_outside=allow_outside)
    text = decode(read_regular_file(path, relative, label="cases file", at=at, field=field), relative)
    if path.suffix == ".jsonl":
        return _load_jsonl(text, relative)
    cases_doc = load_yaml(text, relative)
    if cases_doc.data is None:
        return []  # an empty file, as an empty JSONL file: whether that may be is a gate's question
    items = cases_doc.data.get("cases") if isinstance(cases_doc.data, dict) else cases_doc.data
    prefix: tuple[str | int, ...] = ("cases",) if isinstance(cases_doc.data, dict) else ()
    if not isinstance(items, list):
        raise SpecError(
            cases_doc.where(()), "", "expected a list of cases", "write one '- id: ...' entry per case"
        )
    return [
        Case(_validate(CaseSpec, item, cases_doc, (*prefix, i)), cases_doc.where((*prefix, i)))
        for i, item in enumerate(items)
    ]


def _load_jsonl(text: str, display: str) -> list[Case]:
    cases = []
    for number, item in json_lines(text, display):
        line_doc = Sourced(display, item, {(): (number, 1)})
        cases.append(Case(_validate(CaseSpec, item, line_doc), Location(display, number, 1)))
    return cases


def load_rubric(path: Path, display: str) -> Rubric:
    doc = read_yaml(path, display)
    spec = _validate(RubricSpec, _mapping(doc, "rubric"), doc)
    entries = tuple(doc.where(("benchmarks", i)) for i in range(len(spec.benchmarks)))
    return Rubric(spec, doc.where(("code",)), entries)
