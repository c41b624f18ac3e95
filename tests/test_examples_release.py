"""The release example (examples/release), run as its README says: the product's outputs come from
its task and are judged, and the candidate model's prompt reaches the model with its few-shot
examples. Offline: the judge is the FunctionModel of ``JUDGE_CONFTEST``, the candidate model a
loopback fake server; only the ``local_model`` test starts the bundled model."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import JUDGE_CONFTEST, Suite

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "release"

# What app/extract.py returns for each case of REL-VIT1: it misses the spelled-out vital signs.
VITALS = {
    "full-set": {"blood_pressure": "142/90", "heart_rate": 88, "respiratory_rate": 16, "spo2": 97},
    "pulse-first": {"blood_pressure": "98/60", "heart_rate": 112, "spo2": 91},
    "repeat-after-fluids": {"blood_pressure": "110/70", "heart_rate": 96},
    "spelled-out": {},
}


@pytest.fixture
def release(pytester: pytest.Pytester) -> Suite:
    """A copy of examples/release (its pytest.ini makes it the rootdir) with the offline judge."""
    shutil.copytree(
        EXAMPLE, pytester.path, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".llmjudge", "__pycache__")
    )
    pytester.makeconftest(JUDGE_CONFTEST)
    return Suite(pytester)


def cases(suite: Suite) -> dict[str, dict]:
    benchmark = json.loads((suite.root / "r.json").read_text())["benchmarks"][0]
    return {case["id"]: case for case in benchmark["cases"]}


def test_the_python_task_produces_the_outputs_that_are_judged(release: Suite) -> None:
    run = ("benchmarks/REL-VIT1.yaml", "--llmjudge-results=r.json")
    release.run(*run, syrupy=True).assert_outcomes(passed=5)  # the prompt snapshot and four cases
    produced = {case_id: case["produced"] for case_id, case in cases(release).items()}
    assert {case_id: p["output"] for case_id, p in produced.items()} == {
        case_id: {"vitals": vitals} for case_id, vitals in VITALS.items()
    }
    assert {(p["source"], p["task"]) for p in produced.values()} == {("task", "app.extract:run@1")}
    judged = release.judge_calls()
    assert len(judged) == 4 and all('"vitals"' in output for output in judged)
    release.run(*run, syrupy=True).assert_outcomes(passed=5)
    assert len(release.judge_calls()) == 4  # nothing changed: no task call, no judge call
    assert {case["produced"]["source"] for case in cases(release).values()} == {"task cache"}


def test_another_candidate_model_gets_the_prompt_with_few_shot_examples(
    release: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pydantic_ai.models
    from fake_openai import serve

    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    release.pytester.makeconftest(
        JUDGE_CONFTEST.replace("pydantic_ai.models.ALLOW_MODEL_REQUESTS = False", "")
    )
    answer = {"medications": ["ondansetron 4 mg IV"]}
    with serve(verdict=answer) as fake:
        result = release.run(
            "benchmarks/REL-MED1.yaml",
            "--llmjudge-results=r.json",
            "--llmjudge-task-model=openai:candidate-2",
            f"--llmjudge-task-base-url={fake.url}/v1",
            syrupy=True,
        )
        result.assert_outcomes(passed=5)
        requests = {_case_narrative(c.body["messages"]): c.body for c in fake.completions}
    med_cases = _med_cases()
    assert sorted(requests) == sorted(case["source_narrative"] for case in med_cases.values())
    for case_id, case in med_cases.items():
        body = requests[case["source_narrative"]]
        settings = (body["model"], body["temperature"], body["max_completion_tokens"], body["stop"])
        assert settings == ("candidate-2", 0, 64, ["<|im_end|>"])
        assert [m["role"] for m in body["messages"]] == ["system", *["user", "assistant"] * 2, "user"]
        others = [other for other_id, other in med_cases.items() if other_id != case_id]
        shots = body["messages"][1:-1]  # two examples, each a user turn and the answer expected of it
        assert {m["content"] for m in shots[0::2]} <= {f"Narrative: {o['source_narrative']}" for o in others}
        assert {m["content"] for m in shots[1::2]} <= {_compact(o["ground_truth"]) for o in others}
        assert cases(release)[case_id]["produced"]["output"] == json.dumps(answer)
    assert len(release.judge_calls()) == 4


def _compact(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _case_narrative(messages: list[dict]) -> str:
    return str(messages[-1]["content"]).removeprefix("Narrative: ")


def _med_cases() -> dict[str, dict]:
    import yaml

    spec = yaml.safe_load((EXAMPLE / "benchmarks" / "REL-MED1.yaml").read_text())
    return {case["id"]: case for case in spec["cases"]}


@pytest.mark.local_model
@pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None,
    reason="needs the local extra: pip install -e '.[local]'",
)
def test_the_bundled_model_is_task_and_judge_from_one_server(pytester: pytest.Pytester) -> None:
    shutil.copytree(
        EXAMPLE, pytester.path, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".llmjudge", "__pycache__")
    )
    result = pytester.runpytest_subprocess(
        "benchmarks/REL-MED1.yaml",
        "-k",
        "chest-pain",
        "--llmjudge-model=local",
        "--llmjudge-timeout=240",  # about the wiring, not the speed of a machine busy with other work
        "--llmjudge-results=r.json",
        "-p",
        "no:cacheprovider",
        timeout=540,
    )
    assert "error" not in result.parseoutcomes()
    assert len(re.findall(r"served at http://127\.0\.0\.1:\d+", result.stdout.str())) == 1
    case = cases(Suite(pytester))["chest-pain"]
    assert case["produced"]["source"] == "task" and case["produced"]["task"].startswith("local:")
    assert isinstance(case["produced"]["output"], str) and case["produced"]["output_tokens"] > 0
