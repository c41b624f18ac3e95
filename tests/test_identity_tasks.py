"""A model task records the model that answered its call, as a judge's verdict does.

The task calls the loopback OpenAI-compatible server, whose answers name a configurable model
(the provider's resolved snapshot) and ``system_fingerprint``; the judge is the offline one.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

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
        result = suite.run("benchmarks", "--llmjudge-results=r.json", "--llmjudge-html=r.html", "-k", "asked")
        result.assert_outcomes(passed=1)
        assert len(fake.completions) == 1
        (case,) = results(suite)["benchmarks"][0]["cases"]
        produced = case["produced"]
        assert produced["source"] == "task"
        assert produced["answered_by"] == {"model": "release-1-2025-04-14", "fingerprint": "fp_t"}
        result.stdout.fnmatch_lines(
            ["task model *release-1* answered as release-1-2025-04-14 (fingerprint fp_t)"]
        )
        page = (suite.root / "r.html").read_text()
        header = page[page.index("<header") : page.index("</header>")]
        said = "answered as <code>release-1-2025-04-14</code> (fingerprint <code>fp_t</code>) · 1 output(s)"
        assert "<dt>task model</dt>" in header and said in header
        # the output cache answers the next run: no call, and the output says who answered the
        # call that filled it
        again = suite.run("benchmarks", "--llmjudge-results=r.json", "-k", "asked")
        assert len(fake.completions) == 1
        (case,) = results(suite)["benchmarks"][0]["cases"]
        assert case["produced"]["source"] == "task cache"
        assert case["produced"]["answered_by"] == {"model": "release-1-2025-04-14", "fingerprint": "fp_t"}
        again.stdout.fnmatch_lines(
            ["task model *release-1* answered as release-1-2025-04-14 (fingerprint fp_t)"]
        )


def test_an_output_cache_of_an_earlier_version_gains_the_column_and_keeps_its_outputs(tmp_path: Path) -> None:
    from pytest_llmjudge.tasks.output_cache import OutputCache, StoredOutput

    path = tmp_path / "cache.sqlite"
    with sqlite3.connect(path) as db:  # the outputs table before who answered was recorded
        db.execute(
            "CREATE TABLE outputs (key TEXT PRIMARY KEY, task TEXT NOT NULL, benchmark TEXT NOT NULL, "
            "case_id TEXT NOT NULL, output TEXT NOT NULL, input_tokens INTEGER NOT NULL, "
            "output_tokens INTEGER NOT NULL, latency REAL NOT NULL, created REAL NOT NULL) WITHOUT ROWID"
        )
        db.execute("INSERT INTO outputs VALUES ('k1', 't', 'B1', 'c0', '\"old\"', 3, 2, 0.5, 0)")
    db.close()
    replay = OutputCache(path, read_only=True)  # read as it is: not known who answered
    assert replay.get("k1") == StoredOutput("old", 3, 2, 0.5, None)
    replay.close()
    cache = OutputCache(path)
    assert cache.get("k1") == StoredOutput("old", 3, 2, 0.5, None)
    who = {"model": "m-2025-01-31", "fingerprint": None}
    cache.put("k2", "t", "B1", "c1", StoredOutput("new", 1, 1, 0.1, who))
    assert cache.get("k2") == StoredOutput("new", 1, 1, 0.1, who)
    assert cache.write_errors == []
    cache.close()
