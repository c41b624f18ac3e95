"""A stored calibration vouches only for the snapshot that answered its judge calls.

Every run here judges against the loopback OpenAI-compatible server, whose answers name a
configurable model (the provider's resolved snapshot); it passes every output.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pydantic_ai.models
import pytest
from fake_openai import FakeOpenAI, serve

LABELS = 4


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    with serve(model="fake-judge-2024-07-18", system_fingerprint="fp_a") as server:
        yield server


def _suite(pytester: pytest.Pytester) -> None:
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    (pytester.path / "data").mkdir(exist_ok=True)
    rows = [{"id": f"l{i}", "candidate_output": f"labelled {i}", "label": "pass"} for i in range(LABELS)]
    (pytester.path / "data" / "B1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (pytester.path / "benchmarks" / "B1.yaml").write_text(
        "code: B1\nconcept: The output is right.\n"
        "inclusion_criteria: Apply when there is output. Flag if it is wrong.\n"
        f"threshold: 0.5\njudge: {{min_labels: {LABELS}}}\ncalibration_file: data/B1.jsonl\n"
        "cases:\n  - {id: c0, candidate_output: o0}\n  - {id: c1, candidate_output: o1}\n"
    )


def _run(pytester: pytest.Pytester, fake: FakeOpenAI, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks", "--llmjudge-model=fake-judge",
        f"--llmjudge-base-url={fake.url}/v1", "--llmjudge-attempts=1", *args,
    )  # fmt: skip


def test_a_calibration_of_one_snapshot_does_not_vouch_for_another(
    pytester: pytest.Pytester, fake: FakeOpenAI
) -> None:
    _suite(pytester)
    assert _run(pytester, fake).ret == 0  # the labelled cases judged: stored for this snapshot
    (stored,) = (pytester.path / ".llmjudge" / "calibration").glob("B1-*.json")
    assert json.loads(stored.read_text())["snapshots"] == ["fake-judge-2024-07-18"]
    unlabelled = ("-k", "not llmjudge_labelled", "--llmjudge-results=run.json")
    # the same snapshot answers: its stored calibration vouches for the run
    same = _run(pytester, fake, *unlabelled)
    assert same.ret == 0
    same.stdout.fnmatch_lines(["*B1: reused the stored calibration of this judge*"])
    # the provider moved the alias: the same model string, another snapshot
    fake.model = "fake-judge-2025-01-31"
    moved = _run(pytester, fake, "--llmjudge-cache=refresh", *unlabelled)
    assert moved.ret == 1  # no labels vouch for this snapshot: below min_labels, untrusted
    moved.stdout.fnmatch_lines(
        [
            "*B1: calibration is for another judge snapshot (stored for fake-judge-2024-07-18, "
            "this run judged by fake-judge-2025-01-31)*"
        ]
    )
    assert "reused the stored calibration" not in moved.stdout.str()
    (benchmark,) = json.loads((pytester.path / "run.json").read_text())["benchmarks"]
    calibration = benchmark["calibration"]
    assert calibration["source"] == "run" and calibration["n_labels"] == 0
    assert "calibration is for another judge snapshot" in calibration["detail"]
    # two labelled cases judged by the new snapshot replace the old snapshot's four pairs, not join them
    relabelled = _run(pytester, fake, "--llmjudge-cache=refresh", "-k", "l0 or l1")
    assert relabelled.ret == 1
    relabelled.stdout.fnmatch_lines(["*gate B1 failed: judge untrusted: 2 labels < 4*"])
    data = json.loads(stored.read_text())
    assert data["snapshots"] == ["fake-judge-2025-01-31"]
    assert data["cases"] == ["calibration::l0", "calibration::l1"]
