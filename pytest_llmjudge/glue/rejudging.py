"""``--llmjudge-rejudge-baseline``: the baseline run's stored outputs judged again by this run's
judge, through the run's judging service (``pipeline.rejudge``), before the gates are decided.
The comparison then rests on one judge, and the flips on identical outputs are the judge's drift
(``gating.judge_drift``)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..gating.judge_drift import JudgeDrift
    from ..judging.verdict import Outcome
    from ..pipeline.service import JudgingService
    from ..suite.settings import RunSettings
    from .run import Run


def check_rejudge_baseline(
    config: pytest.Config, settings: RunSettings, baseline: dict[str, Any] | None
) -> None:
    """A usage error for ``--llmjudge-rejudge-baseline`` without a baseline, or with one that did
    not store the outputs of its compared cases (a format-1 file, or cases without outputs), or
    where it cannot call the judge (a replay, a batched run, pytest-xdist workers)."""
    if not settings.rejudge_baseline:
        return
    if settings.baseline is None:
        raise pytest.UsageError(
            "--llmjudge-rejudge-baseline judges the baseline run's outputs again: give its results "
            "file with --llmjudge-baseline FILE"
        )
    cannot = {
        "--llmjudge-cache=replay (no model is called)": settings.cache == "replay",
        f"--llmjudge-batch={settings.batch}": settings.batch != "off",
        "pytest-xdist (-n): the controller judges no case": bool(config.getoption("numprocesses", None)),
    }
    for what, given in cannot.items():
        if given:
            raise pytest.UsageError(
                f"--llmjudge-rejudge-baseline judges the baseline's outputs with this run's judge when "
                f"the cases have run; it cannot with {what}"
            )
    if baseline is None:
        return  # not read: every gate fails under --llmjudge-fail-on regression, as without it
    from ..gating.judge_drift import NO_OUTPUT_HELP, without_outputs

    missing = without_outputs(baseline)
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise pytest.UsageError(
            f"--llmjudge-baseline {settings.baseline}: {len(missing)} compared case(s) have no stored "
            f"output to judge again ({shown}): {NO_OUTPUT_HELP}"
        )


def rejudge_baseline(run: Run, baseline: dict[str, Any]) -> tuple[dict[str, Any], tuple[JudgeDrift, ...]]:
    """``baseline`` with the verdicts this run's judge gives its outputs, and the judge's drift
    per benchmark; the run's release cases that the baseline also holds are judged."""
    from ..gating.judge_drift import drift_of, judges_counted, on_this_judge, release_cases
    from ..pipeline.rejudge_outputs import Rejudged, rejudge_outputs
    from .nodes import CaseItem
    from .stash import STATE

    outputs = {(code, c["id"]): c["produced"]["output"] for code, c in release_cases(baseline)}
    cases: list[Rejudged] = []
    same: dict[str, Outcome] = {}  # an output this run judged too: its verdict, by this run's judge
    for item in run.session.items if run.session is not None else ():
        if type(item) is not CaseItem or (item.benchmark.code, item.case.id) not in outputs:
            continue
        output = outputs[(item.benchmark.code, item.case.id)]
        case = replace(item.case, spec=item.case.spec.model_copy(update={"candidate_output": output}))
        nodeid = f"{item.nodeid}::rejudged-baseline"
        cases.append(Rejudged(nodeid, item.benchmark, case, item.recompile(case)))
        judged = item.outcome is not None and item.outcome.verdict is not None
        if judged and item.outcome is not None and cases[-1].request.digest == item.request.digest:
            same[nodeid] = item.outcome
    host: Any = run.config.stash[STATE]  # ``glue.host.Host``, which imports this module's importers
    service: JudgingService = host.service
    outcomes = same | rejudge_outputs(service, [c for c in cases if c.nodeid not in same], service.combine)
    verdicts: dict[str, dict[str, bool | None]] = {}
    answers: dict[str, list[tuple[str, str, str | None]]] = {}
    for one in cases:
        code, outcome = one.benchmark.code, outcomes.get(one.nodeid)
        if outcome is None:  # no judge of its own to judge it (a panel's case): left as it was
            continue
        passed = None if outcome.verdict is None else outcome.verdict.effective_pass
        verdicts.setdefault(code, {})[one.case.id] = passed
        for sample in outcome.samples or (outcome,):
            answered = sample.verdict.answered if sample.verdict is not None else None
            if answered is not None:
                answers.setdefault(code, []).append((sample.model, answered.model, answered.fingerprint))
    judges = {code: judges_counted(found) for code, found in answers.items()}
    return on_this_judge(baseline, verdicts, judges), drift_of(baseline, verdicts, judges)
