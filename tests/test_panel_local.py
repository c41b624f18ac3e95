"""The bundled offline judge as a member of a panel: one local server, beside two judges behind a
loopback OpenAI-compatible server."""

from __future__ import annotations

import importlib.util
import json

import pytest
from fake_openai import FakeOpenAI
from test_panel import calls, panel_server  # noqa: F401  (the fixture)

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        importlib.util.find_spec("xllamacpp") is None,
        reason="needs the local extra: pip install -e '.[local]'",
    ),
]


def test_local_is_a_member_of_a_panel(pytester: pytest.Pytester, panel_server: FakeOpenAI) -> None:  # noqa: F811
    pytester.makeini("[pytest]\n")
    (pytester.path / "benchmarks").mkdir()
    url = f"{panel_server.url}/v1"
    (pytester.path / "benchmarks" / "P1.yaml").write_text(
        "code: P1\nconcept: The output is right.\n"
        "inclusion_criteria: Apply when there is output. Flag if it is wrong.\ncases:\n"
        "  - {id: c0, candidate_output: 'fine'}\n  - {id: c1, candidate_output: 'bad judge-b'}\n"
        f"judge:\n  panel: [local, {{model: judge-a, base_url: '{url}'}},"
        f" {{model: judge-b, base_url: '{url}'}}]\n"
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "--llmjudge-results=run.json", "benchmarks"
    )
    out = result.stdout.str()
    assert out.count("local judge gemma-3-270m") == 1  # one bundled server for the run
    assert calls(panel_server) == {"judge-a": 2, "judge-b": 2, "judge-c": 0}
    data = json.loads((pytester.path / "run.json").read_text())
    for case in data["benchmarks"][0]["cases"]:
        local = case["panel"]["members"][0]
        assert local["model"].startswith("local:") and local["pass"] is not None  # it answered
