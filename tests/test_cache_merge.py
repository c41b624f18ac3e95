"""``llmjudge cache merge``: the caches of ``-k`` shards as one file, with which a full run in
``--llmjudge-cache=replay`` makes no call; a key answered differently keeps the newest, said."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import Suite
from test_merge import SHARD, judged

from pytest_llmjudge.cli.main import main


def shard_caches(suite: Suite) -> tuple[Path, Path]:
    suite.run("-k", SHARD, "--llmjudge-cache-path=s1.sqlite")
    suite.run("-k", f"not ({SHARD})", "--llmjudge-cache-path=s2.sqlite")
    return suite.root / "s1.sqlite", suite.root / "s2.sqlite"


def test_a_full_replay_with_the_merged_shard_caches_makes_no_call(
    suite: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = shard_caches(judged(suite))
    assert len(suite.judge_calls()) == 8
    capsys.readouterr()
    assert main(["cache", "merge", str(one), str(two), "-o", "all.sqlite"]) == 0
    out = capsys.readouterr().out
    # equal outputs of a benchmark make one request: 2 keys in the first shard, 2 more in the second
    assert "s1.sqlite: 2 verdict(s) taken" in out and "s2.sqlite: 2 verdict(s) taken" in out
    replay = suite.run("--llmjudge-cache=replay", "--llmjudge-cache-path=all.sqlite")
    assert len(suite.judge_calls()) == 8  # not one more
    replay.assert_outcomes(passed=7, failed=3)  # 8 cases and a prompt check per file
    replay.stdout.fnmatch_lines(["judge: 8 verdict(s), 0 model call(s), 8 cache hit(s), *"])


def test_a_key_answered_differently_keeps_the_newest_and_says_so(
    suite: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    one, _ = shard_caches(judged(suite))
    other = suite.root / "other.sqlite"
    other.write_bytes(one.read_bytes())
    with sqlite3.connect(other) as db:
        (key,) = db.execute("SELECT key FROM verdicts ORDER BY key LIMIT 1").fetchone()
        db.execute(
            "UPDATE verdicts SET verdict = replace(verdict, 'matches', 'differs'), created = created + 1 "
            "WHERE key = ?",
            (key,),
        )
    db.close()
    assert main(["cache", "merge", str(one), str(other), "-o", "all.sqlite"]) == 0
    out = capsys.readouterr().out
    assert f"({'verdict'} {key[:12]}): answered differently in {other}; kept the newest (this one)" in out
    assert "1 key(s) answered differently: kept the newest of each" in out
    with sqlite3.connect(suite.root / "all.sqlite") as db:
        (verdict,) = db.execute("SELECT verdict FROM verdicts WHERE key = ?", (key,)).fetchone()
        assert db.execute("SELECT count(*) FROM verdicts").fetchone() == (2,)
    db.close()
    assert "differs" in verdict


def test_a_file_that_is_not_a_cache_is_named(suite: Suite, capsys: pytest.CaptureFixture[str]) -> None:
    (suite.root / "notes.sqlite").write_text("not a database")
    one, _ = shard_caches(judged(suite))
    assert main(["cache", "merge", str(one), "notes.sqlite", "-o", "all.sqlite"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("llmjudge cache merge: ") and "notes.sqlite" in err and "Traceback" not in err
    assert not (suite.root / "all.sqlite").exists()
