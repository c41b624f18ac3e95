"""Which judge answered, per benchmark, and whether two runs (or one run's verdicts) rest on the
same judge. Pure: records and results files in, frozen values out.

A judge is the model string asked for (``openai:gpt-4o-mini``), the snapshot the provider says
answered (``gpt-4o-mini-2024-07-18``) and the serving fingerprint it reported. Another model
string or another snapshot is another judge: verdicts of the two are not comparable. A fingerprint
alone changes whenever a provider rotates its serving backends, so it is said, not stopped on.
A verdict whose snapshot is not known (a code check, a verdict cached before snapshots were
recorded) vouches for no judge and counts against none. A panel's judges are its members, each
under its own model string: the verdicts of one benchmark mix judges when one model string answered
as more than one snapshot, never because a panel's members are other models.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from .gates import BenchmarkGate
    from .records import CaseRecord
    from .statistics import Comparison

_DATED = re.compile(r"(\d{4}-\d{2}-\d{2}|\d{8}|-\d{4}$|@\d{8})")
MIXED = "mixed judges"
JUDGE_CHANGED: Final = "judge changed"
WAY_OUT = (
    "compare runs of one judge: judge the baseline's stored outputs with this run's judge "
    "(--llmjudge-rejudge-baseline), pin the judge to a dated snapshot (--llmjudge-model), or rerun "
    "the baseline with this run's judge and pass its results file as --llmjudge-baseline"
)
MIXED_WAY_OUT = (
    "judge the stale cached verdicts again with this run's judge (--llmjudge-rejudge-stale), "
    "re-judge every case (--llmjudge-cache=refresh), or pin the judge to the snapshot the cached "
    "verdicts came from"
)


@dataclass(frozen=True)
class SeenJudge:
    """One judge identity behind some of a benchmark's verdicts, and how many."""

    requested: str
    model: str
    fingerprint: str | None
    verdicts: int

    @property
    def judge(self) -> tuple[str, str]:
        """What makes verdicts comparable: the model string asked for and the snapshot that answered."""
        return (self.requested, self.model)

    def label(self) -> str:
        """``openai:gpt-4o-mini answered as gpt-4o-mini-2024-07-18 (fingerprint fp_1)``."""
        fingerprint = f" (fingerprint {self.fingerprint})" if self.fingerprint else ""
        return f"{self.requested} answered as {self.model}{fingerprint}"

    def to_json(self) -> dict[str, Any]:
        return {
            "requested": self.requested,
            "model": self.model,
            "fingerprint": self.fingerprint,
            "verdicts": self.verdicts,
        }


def judges_seen(records: Iterable[CaseRecord]) -> tuple[SeenJudge, ...]:
    """The judge identities behind ``records``' samples, most verdicts first; a panel case's are
    its members', each under its own model string."""
    counts: dict[tuple[str, str, str | None], int] = {}
    for key in _identities(records):
        counts[key] = counts.get(key, 0) + 1
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0][0], item[0][1], item[0][2] or ""))
    return tuple(SeenJudge(req, model, fp, n) for (req, model, fp), n in ordered)


def _identities(records: Iterable[CaseRecord]) -> Iterator[tuple[str, str, str | None]]:
    """(model string, snapshot, fingerprint) of each verdict whose snapshot is known."""
    for record in records:
        for sample in record.samples:
            if sample.answered_model is not None:
                yield (record.model, sample.answered_model, sample.answered_fingerprint)
        for member in record.panel.members if record.panel is not None else ():
            for model, fingerprint in member.identities():
                yield (member.model, model, fingerprint)


def judges_by_benchmark(records: Iterable[CaseRecord]) -> dict[str, tuple[SeenJudge, ...]]:
    """``judges_seen`` of each benchmark's release and calibration records."""
    grouped: dict[str, list[CaseRecord]] = {}
    for record in records:
        grouped.setdefault(record.benchmark, []).append(record)
    return {code: judges_seen(found) for code, found in grouped.items()}


def judges_of_results(results: Mapping[str, Any]) -> dict[str, tuple[SeenJudge, ...]]:
    """Each benchmark's judges as a results file recorded them (none in files of earlier versions)."""
    found: dict[str, tuple[SeenJudge, ...]] = {}
    for benchmark in results.get("benchmarks") or ():
        seen = benchmark.get("judges") or ()
        found[benchmark["code"]] = tuple(
            SeenJudge(s["requested"], s["model"], s.get("fingerprint"), int(s.get("verdicts", 0)))
            for s in seen
        )
    return found


def _mixed_requests(seen: Sequence[SeenJudge]) -> set[str]:
    """The model strings that answered as more than one snapshot. A panel's members are other
    model strings by design, so only one model string's snapshots can mix."""
    snapshots: dict[str, set[str]] = {}
    for s in seen:
        snapshots.setdefault(s.requested, set()).add(s.model)
    return {requested for requested, models in snapshots.items() if len(models) > 1}


def mixed(seen: Sequence[SeenJudge]) -> bool:
    """One model string's verdicts came from more than one snapshot."""
    return bool(_mixed_requests(seen))


def mixed_detail(seen: Sequence[SeenJudge]) -> str:
    """``mixed judges: 3 verdicts of A, 2 of B; …``, of the model strings that mixed."""
    mixing = _mixed_requests(seen)
    parts = [f"{s.verdicts} verdict(s) of {s.label()}" for s in seen if s.requested in mixing]
    return f"{MIXED}: {'; '.join(parts)}; {MIXED_WAY_OUT}"


@dataclass(frozen=True)
class JudgeChange:
    """How the judge of a benchmark differs between the baseline and this run."""

    baseline: str  # the baseline's judge(s), labelled
    now: str
    stop: bool  # another model string or snapshot: the comparison measures the judge too

    def text(self) -> str:
        if self.stop:
            return f"{JUDGE_CHANGED}: baseline judged by {self.baseline}, this run by {self.now}"
        return (
            f"judge fingerprint changed: baseline judged by {self.baseline}, this run by {self.now} "
            "(same snapshot; providers rotate serving backends, so the comparison stands)"
        )


def _labels(seen: Sequence[SeenJudge]) -> str:
    return " and ".join(s.label() for s in seen)


def judge_change(before: Sequence[SeenJudge], now: Sequence[SeenJudge]) -> JudgeChange | None:
    """The change of judge between the baseline's verdicts and this run's, or None when both rest
    on the same judge (or either side's judge is not known)."""
    if not before or not now:
        return None
    if {s.judge for s in before} != {s.judge for s in now}:
        return JudgeChange(_labels(before), _labels(now), True)
    fingerprints = {(s.judge, s.fingerprint) for s in before}, {(s.judge, s.fingerprint) for s in now}
    if fingerprints[0] != fingerprints[1]:
        return JudgeChange(_labels(before), _labels(now), False)
    return None


def judged_alike(
    comparisons: Sequence[Comparison],
    records: Sequence[CaseRecord],
    baseline: Mapping[str, Any],
    fail_on: str | None,
) -> tuple[tuple[Comparison, ...], tuple[str, ...]]:
    """The comparisons, each judged across a change of judge marked ``judge changed`` (another
    model string or snapshot) or noted (a fingerprint alone), and what the run must say of them."""
    before, now = judges_of_results(baseline), judges_by_benchmark(records)
    marked: list[Comparison] = []
    notes: list[str] = []
    for comparison in comparisons:
        change = judge_change(before.get(comparison.benchmark, ()), now.get(comparison.benchmark, ()))
        if change is None:
            marked.append(comparison)
            continue
        if change.stop:
            comparison = replace(comparison, verdict=JUDGE_CHANGED, judge_change=change.text())
            stops = " (fails under --llmjudge-fail-on)" if not fail_on else ""
            notes.append(f"{comparison.benchmark}: {change.text()}{stops}; {WAY_OUT}")
        else:
            comparison = replace(comparison, judge_change=change.text())
            notes.append(f"{comparison.benchmark}: {change.text()}")
        marked.append(comparison)
    return tuple(marked), tuple(notes)


def mark_mixed(
    gates: Sequence[BenchmarkGate], records: Sequence[CaseRecord], fail_on: str | None
) -> tuple[list[BenchmarkGate], tuple[str, ...]]:
    """Gates whose verdicts came from more than one judge: said always; under ``fail_on`` the gate
    is untrusted (``mixed judges``), as a calibration that does not vouch for its judge makes it."""
    seen = judges_by_benchmark(records)
    marked: list[BenchmarkGate] = []
    notes: list[str] = []
    for gate in gates:
        judges = seen.get(gate.code, ())
        if mixed(judges):
            detail = mixed_detail(judges)
            notes.append(f"{gate.code}: {detail}" + ("" if fail_on else " (fails under --llmjudge-fail-on)"))
            if fail_on:
                gate = replace(gate, override="untrusted", detail=detail)
        marked.append(gate)
    return marked, tuple(notes)


def is_pinned(requested: str, answered: str) -> bool:
    """Whether the model string asked for already names the snapshot that answered: an alias that
    resolved to a dated snapshot (``gpt-4o-mini`` → ``gpt-4o-mini-2024-07-18``) is not."""
    name = requested.split(":", 1)[-1].split("@", 1)[0]  # ``NAME@base-url`` for a served model
    return name == answered or bool(_DATED.search(name)) or not answered.startswith(name)


def judge_lines(seen: Iterable[SeenJudge]) -> list[str]:
    """The run summary's judges, each said once, with a hint to pin an alias that resolved to a
    dated snapshot."""
    lines: list[str] = []
    for judge in sorted({(s.requested, s.model, s.fingerprint) for s in seen}, key=str):
        requested, model, fingerprint = judge
        lines.append(f"judge {SeenJudge(requested, model, fingerprint, 0).label()}")
        if not is_pinned(requested, model):
            provider = requested.split(":", 1)[0] + ":" if ":" in requested else ""
            lines.append(
                f"  {requested} is an alias: pin --llmjudge-model={provider}{model} so that a later "
                "run is judged by the same snapshot"
            )
    return lines
