"""JUnit properties of a case record (pytest writes them into ``--junitxml``)."""

from __future__ import annotations

from ..gating.records import CaseRecord

# A reason kept in the XML: a judge that answers at length (up to --llmjudge-max-response-bytes)
# would make every CI system that parses the file slow; the whole reason is in the results file.
REASON_LIMIT = 4000


def junit_reason(reason: str, limit: int = REASON_LIMIT) -> str:
    """``reason`` cut to at most ``limit`` characters, saying how much was left out."""
    if len(reason) <= limit:
        return reason
    keep = max(limit - 40, 0)  # room for the note
    return reason[:keep] + f" … [{len(reason) - keep:,} more characters]"


def junit_properties(record: CaseRecord) -> list[tuple[str, str]]:
    verdict = {"pass": "pass", "fail": "fail", "error": "error", "skip": "skipped"}[record.result]
    props = [("llmjudge_verdict", verdict), ("llmjudge_reason", junit_reason(record.reason))]
    if record.score is not None:
        props.append(("llmjudge_score", f"{record.score:g}"))
    if record.uncertain:
        props.append(("llmjudge_uncertain", "true"))
    if record.flaky:
        props.append(("llmjudge_flaky", "true"))
    props += [("llmjudge_model", record.model), ("llmjudge_prompt_hash", record.prompt_hash)]
    if record.case_label and record.judge_pass is not None:
        if record.calibration:  # the item's outcome is the agreement; the verdict is the judge's
            props[0] = ("llmjudge_verdict", "pass" if record.judge_pass else "fail")
        agrees = (record.case_label == "pass") == record.judge_pass
        props += [("llmjudge_label", record.case_label), ("llmjudge_agrees", str(agrees).lower())]
    return props
