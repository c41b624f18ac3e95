"""A model task records the model that answered its call, as a judge's verdict does.

The task calls the loopback OpenAI-compatible server, whose answers name a configurable model
(the provider's resolved snapshot) and ``system_fingerprint``; the judge is the offline one.
"""

from __future__ import annotations

import pytest
from conftest import Suite
from task_suites import results, write_model_suite


def test_a_model_task_records_the_snapshot_and_fingerprint_that_answered(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fake_openai import serve

    with serve(
        verdict={"answer": "heparin"}, model="release-1-2025-04-14", system_fingerprint="fp_t"
    ) as fake:
        write_model_suite(suite, fake.url, monkeypatch)
        result = suite.run("benchmarks", "--llmjudge-results=r.json", "-k", "asked")
        result.assert_outcomes(passed=1)
        assert len(fake.completions) == 1
        (case,) = results(suite)["benchmarks"][0]["cases"]
        produced = case["produced"]
        assert produced["source"] == "task"
        assert produced["answered_by"] == {"model": "release-1-2025-04-14", "fingerprint": "fp_t"}
        result.stdout.fnmatch_lines(
            ["task model *release-1* answered as release-1-2025-04-14 (fingerprint fp_t)"]
        )
        # the output cache answers the next run: no call, so no model answered in this run
        again = suite.run("benchmarks", "--llmjudge-results=r.json", "-k", "asked")
        assert len(fake.completions) == 1
        (case,) = results(suite)["benchmarks"][0]["cases"]
        assert case["produced"]["source"] == "task cache" and case["produced"]["answered_by"] is None
        assert "task model" not in again.stdout.str()
