"""Vital signs from a narrative, by pattern: the product that ``benchmarks/REL-VIT1.yaml`` judges.

Deterministic and offline, so the benchmark shows the task step without a model: the suite calls
``run`` once per case that has no ``candidate_output`` and judges what it returns. It knows the
usual abbreviations (BP, HR, RR, SpO2) and misses spelled-out ones, a gap the benchmark's last
case exposes.
"""

from __future__ import annotations

import re

from pytest_llmjudge.tasks.task_input import TaskInput

PATTERNS = {
    "blood_pressure": re.compile(r"\bBP\s*(\d{2,3}/\d{2,3})"),
    "heart_rate": re.compile(r"\b(?:HR|pulse)\s*(\d{2,3})\b", re.IGNORECASE),
    "respiratory_rate": re.compile(r"\bRR\s*(\d{1,2})\b"),
    "spo2": re.compile(r"\bSpO2\s*(\d{2,3})\s*%"),
}


def extract_vitals(narrative: str) -> dict[str, int | str]:
    """The vital signs ``narrative`` states, by name; blood pressure stays ``"systolic/diastolic"``."""
    vitals: dict[str, int | str] = {}
    for name, pattern in PATTERNS.items():
        found = pattern.search(narrative)
        if found:
            value = found.group(1)
            vitals[name] = value if name == "blood_pressure" else int(value)
    return vitals


def run(case: TaskInput) -> dict[str, dict[str, int | str]]:
    """The task: one case in, its candidate output out."""
    return {"vitals": extract_vitals(case.source_narrative or "")}
