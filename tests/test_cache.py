"""The verdict cache: keys, storage, modes, crash safety, and ``llmjudge cache`` (pytester for runs)."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import Suite

from pytest_llmjudge.cli.main import main as cli_main
from pytest_llmjudge.compile.request import CompiledRequest
from pytest_llmjudge.execution.cache import CACHE_FORMAT, CachedVerdict, CacheError, VerdictCache, cache_key
from pytest_llmjudge.execution.retries import CaseJob, RetryPolicy, judge_uncached, settle_from_cache
from pytest_llmjudge.execution.scheduler import Progress, Slots
from pytest_llmjudge.judging.verdict import JudgeFailure, Outcome, Usage, Verdict

REQUEST = CompiledRequest(
    "B1", "c1", "system", "rubric", '{"in": 1}', '{"gt": 2}', '{"out": 3}', "no_reasoning"
)
VERDICT = Verdict(True, "the output matches the ground truth", 1.0)

# -- keys and storage ------------------------------------------------------------------------


def test_key_changes_with_request_model_and_answer_relevant_settings() -> None:
    base = cache_key(REQUEST.digest, "openai:gpt-4o", {"temperature": 0.0})
    other_case = CompiledRequest(
        "B1", "c1", "system", "rubric", '{"in": 1}', '{"gt": 2}', '{"out": 4}', "no_reasoning"
    )
    assert cache_key(other_case.digest, "openai:gpt-4o", {"temperature": 0.0}) != base
    assert cache_key(REQUEST.digest, "openai:gpt-4o-mini", {"temperature": 0.0}) != base
    assert cache_key(REQUEST.digest, "openai:gpt-4o", {"temperature": 0.5}) != base
    assert cache_key(REQUEST.digest, "openai:gpt-4o", {"temperature": 0.0, "max_tokens": 50}) != base
    # how long a call may take does not change the answer
    assert cache_key(REQUEST.digest, "openai:gpt-4o", {"temperature": 0.0, "timeout": 5}) == base


def test_key_includes_the_cache_format(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_llmjudge.execution import cache as cache

    base = cache_key(REQUEST.digest, "m", {})
    monkeypatch.setattr(cache, "CACHE_FORMAT", CACHE_FORMAT + 1)
    assert cache_key(REQUEST.digest, "m", {}) != base


def test_put_then_get_round_trips_a_verdict(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "deep" / "cache.sqlite")
    assert cache.get("k") is None
    assert cache.put("k", VERDICT, "openai:gpt-4o", Usage(1, 120, 30), "B1", "c1")
    hit = cache.get("k")
    assert hit is not None and (hit.verdict, hit.model) == (VERDICT, "openai:gpt-4o")
    cache.close()
    reopened = VerdictCache(tmp_path / "deep" / "cache.sqlite")
    assert reopened.get("k") is not None
    assert reopened.stats().input_tokens == 120
    reopened.close()


def test_many_keys_are_looked_up_together(tmp_path: Path) -> None:
    """A suite's lookups in a few queries: more keys than SQLite binds in one, hits and misses mixed."""
    cache = VerdictCache(tmp_path / "c.sqlite")
    for n in range(0, 1200, 3):
        cache.put(f"k{n}", Verdict(n % 2 == 0, f"case {n}"), "m", Usage(), "B1", f"c{n}")
    broken = (
        "INSERT INTO verdicts VALUES ('broken', 'm', 'B1', 'c', 'not json', 0, 0, 0, 0, NULL, NULL, NULL)"
    )
    cache._db.execute(broken)
    found = cache.get_many([f"k{n}" for n in range(1200)] + ["broken"])
    assert sorted(found) == sorted(f"k{n}" for n in range(0, 1200, 3))  # the unreadable entry is a miss
    assert found["k999"].verdict == Verdict(False, "case 999")
    cache.close()


def test_batched_writes_commit_together_and_on_close(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite", batch=3, batch_seconds=60)
    reader = VerdictCache(tmp_path / "c.sqlite")
    for n in range(2):
        assert cache.put(f"k{n}", VERDICT, "m", Usage(), "B1", f"c{n}")
    assert reader.get_many(["k0", "k1"]) == {}  # held for the batch
    cache.put("k2", VERDICT, "m", Usage(), "B1", "c2")
    assert sorted(reader.get_many(["k0", "k1", "k2"])) == ["k0", "k1", "k2"]  # one transaction
    cache.put("k3", VERDICT, "m", Usage(), "B1", "c3")
    cache.close()
    assert reader.get("k3") is not None  # closing writes what a batch still held
    reader.close()


def test_a_batch_is_written_once_it_is_old_enough_without_further_writes(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite", batch=100, batch_seconds=0.05)
    reader = VerdictCache(tmp_path / "c.sqlite")
    cache.put("first", VERDICT, "m", Usage(), "B1", "c1")
    deadline = time.monotonic() + 5
    while not reader.get_many(["first"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sorted(reader.get_many(["first"])) == ["first"]  # no second put was needed
    cache.close()
    reader.close()


def test_a_killed_run_keeps_verdicts_older_than_half_a_second(tmp_path: Path) -> None:
    """README: a killed run loses at most its last half second of verdicts."""
    path = tmp_path / "c.sqlite"
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from pytest_llmjudge.execution.cache import VerdictCache\n"
        "from pytest_llmjudge.pipeline.service import CACHE_BATCH, CACHE_BATCH_SECONDS\n"
        "from pytest_llmjudge.judging.verdict import Usage, Verdict\n"
        "cache = VerdictCache(Path(sys.argv[1]), batch=CACHE_BATCH, batch_seconds=CACHE_BATCH_SECONDS)\n"
        "cache.put('k', Verdict(True, 'ok'), 'm', Usage(), 'B1', 'c1')\n"
        "print('put', flush=True)\n"
        "time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "put"
        time.sleep(2.0)
    finally:
        child.kill()  # SIGKILL: no close(), no atexit
        child.wait()
    reader = VerdictCache(path)
    assert sorted(reader.get_many(["k"])) == ["k"]
    reader.close()


def test_a_failed_batch_names_every_case_it_held(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite", batch=2)
    cache._db.execute("PRAGMA busy_timeout = 50")
    blocker = sqlite3.connect(tmp_path / "c.sqlite", timeout=0)
    blocker.execute("BEGIN EXCLUSIVE")
    cache.put("a", VERDICT, "m", Usage(), "B1", "c1")
    assert not cache.put("b", VERDICT, "m", Usage(), "B1", "c2")
    blocker.rollback()
    assert [e.split(":")[:3] for e in cache.write_errors] == [["B1", "", "c1"], ["B1", "", "c2"]]
    cache.close()


def test_the_file_is_in_wal_mode(tmp_path: Path) -> None:
    VerdictCache(tmp_path / "c.sqlite").close()
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_cache_of_another_format_is_refused(tmp_path: Path) -> None:
    VerdictCache(tmp_path / "c.sqlite").close()
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        db.execute("UPDATE meta SET value = '999' WHERE name = 'format'")
    with pytest.raises(CacheError, match="cache format 999"):
        VerdictCache(tmp_path / "c.sqlite")


def test_a_file_that_is_not_a_cache_is_refused(tmp_path: Path) -> None:
    (tmp_path / "c.sqlite").write_bytes(b"not a database, just some bytes " * 100)
    with pytest.raises(CacheError, match="not a usable verdict cache"):
        VerdictCache(tmp_path / "c.sqlite")


def test_prune_removes_entries_unused_for_days(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    for key in ("old", "used", "new"):
        cache.put(key, VERDICT, "m", Usage(), "B1", key)
    cache.close()
    month_ago = time.time() - 30 * 86_400
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        db.execute("UPDATE verdicts SET used = ? WHERE key IN ('old', 'used')", (month_ago,))
    cache = VerdictCache(tmp_path / "c.sqlite")
    assert cache.get("used") is not None
    cache.close()  # a hit marks the entry as used
    cache = VerdictCache(tmp_path / "c.sqlite")
    assert cache.prune(7) == 1
    assert [cache.get(k) is not None for k in ("old", "used", "new")] == [False, True, True]
    cache.close()


def test_processes_create_and_share_one_cache(tmp_path: Path) -> None:
    # Like xdist workers: they open a cache that does not exist yet at the same moment, then write.
    script = textwrap.dedent(
        """
        import sys, time
        from pathlib import Path
        from pytest_llmjudge.execution.cache import VerdictCache
        from pytest_llmjudge.judging.verdict import Usage, Verdict
        path, name, start = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
        while time.time() < start:
            pass
        cache = VerdictCache(path)
        for n in range(100):
            cache.put(f"{name}-{n}", Verdict(True, "ok"), "m", Usage(), "B", str(n))
            assert cache.get(f"{name}-{n}") is not None
        cache.close()
        """
    )
    for round_ in range(3):
        path = tmp_path / f"round{round_}" / "c.sqlite"
        start = str(time.time() + 0.5)
        names = ("gw0", "gw1", "gw2")
        workers = [subprocess.Popen([sys.executable, "-c", script, str(path), name, start]) for name in names]
        assert [w.wait(timeout=60) for w in workers] == [0, 0, 0]
        cache = VerdictCache(path)
        assert cache.stats().entries == 300
        cache.close()


def test_a_process_killed_mid_write_leaves_a_valid_cache(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from pytest_llmjudge.execution.cache import VerdictCache
        from pytest_llmjudge.judging.verdict import Usage, Verdict
        cache = VerdictCache(Path({str(path)!r}))
        n = 0
        while True:
            cache.put(f"k{{n}}", Verdict(True, "reason " * 50), "m", Usage(1, 10, 10), "B", str(n))
            n += 1
            if n == 50:
                print("written", flush=True)
        """
    )
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline().strip() == "written"
    time.sleep(0.05)
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=10)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    cache = VerdictCache(path)
    entries = cache.stats().entries
    assert entries >= 50
    assert all(cache.get(f"k{n}") is not None for n in range(entries))  # every committed write is whole
    cache.close()


# -- modes, for one case ----------------------------------------------------------------------


def outcome_of(
    cache: VerdictCache | None, mode: str, answers: list[Verdict | JudgeFailure]
) -> tuple[Outcome, int]:
    """Judge REQUEST once under ``mode``; returns the outcome and how many model calls were made."""
    calls = 0

    async def call(request: CompiledRequest) -> tuple[Verdict, Usage]:
        nonlocal calls
        answer = answers[calls]
        calls += 1
        if isinstance(answer, JudgeFailure):
            raise answer
        return answer, Usage(1, 10, 5)

    async def run() -> Outcome:
        job = CaseJob("B1", "c1", REQUEST, call, "fake:judge", {"temperature": 0.0})
        settled = settle_from_cache([job], cache, mode)[0]  # as a run does, for all its cases at once
        if settled is not None:
            return settled
        return await judge_uncached(job, Slots(4, None, Progress()), RetryPolicy(attempts=1), cache, mode)

    return asyncio.run(run()), calls


def test_use_mode_reads_and_writes(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    first, calls = outcome_of(cache, "use", [VERDICT])
    assert (first.verdict, first.cached, calls) == (VERDICT, False, 1)
    again, calls = outcome_of(cache, "use", [])
    assert (again.verdict, again.cached, again.usage, calls) == (VERDICT, True, Usage(), 0)
    cache.close()


def test_refresh_mode_ignores_old_entries_and_writes_new_ones(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    outcome_of(cache, "use", [VERDICT])
    newer = Verdict(False, "a fresh verdict disagrees")
    refreshed, calls = outcome_of(cache, "refresh", [newer])
    assert (refreshed.verdict, refreshed.cached, calls) == (newer, False, 1)
    hit, calls = outcome_of(cache, "use", [])
    assert (hit.verdict, calls) == (newer, 0)
    cache.close()


def test_off_mode_neither_reads_nor_writes(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    outcome_of(cache, "use", [VERDICT])
    newer = Verdict(False, "not stored")
    off, calls = outcome_of(cache, "off", [newer])
    assert (off.verdict, calls) == (newer, 1)
    hit, _ = outcome_of(cache, "use", [])
    assert hit.verdict == VERDICT
    cache.close()


def test_replay_mode_answers_from_the_cache_and_never_calls_the_model(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    miss, calls = outcome_of(cache, "replay", [VERDICT])
    assert calls == 0 and miss.verdict is None and miss.failure is not None
    assert miss.failure.kind == "cache-miss"
    assert "B1::c1" in miss.failure.message and "replay" in miss.failure.message
    outcome_of(cache, "use", [VERDICT])
    hit, calls = outcome_of(cache, "replay", [])
    assert (hit.verdict, hit.cached, calls) == (VERDICT, True, 0)
    cache.close()


def test_errors_are_never_cached(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    failed, _ = outcome_of(cache, "use", [JudgeFailure("http-500", "boom", True)])
    assert failed.failure is not None
    assert cache.stats().entries == 0
    judged, calls = outcome_of(cache, "use", [VERDICT])
    assert (judged.verdict, calls) == (VERDICT, 1)
    cache.close()


def test_a_failed_write_keeps_the_verdict(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "c.sqlite")
    blocker = sqlite3.connect(tmp_path / "c.sqlite", timeout=0)
    blocker.execute("BEGIN EXCLUSIVE")
    cache._db.execute("PRAGMA busy_timeout = 50")  # do not wait 30 s for the lock in a test
    outcome, _ = outcome_of(cache, "use", [VERDICT])
    blocker.rollback()
    assert outcome.verdict == VERDICT
    assert cache.write_errors and "B1::c1" in cache.write_errors[0]
    cache.close()


# -- modes, in a run --------------------------------------------------------------------------

TWO_CASES = """\
code: B-CACHE
concept: The output is right.
inclusion_criteria: Apply always. Flag if it is wrong.
cases:
  - id: first
    candidate_output: {first}
  - id: second
    candidate_output: two
"""


def cached_run(suite: Suite, *args: str) -> tuple[pytest.RunResult, int]:
    before = len(suite.judge_calls())
    result = suite.run(*args)
    return result, len(suite.judge_calls()) - before


def test_an_unchanged_rerun_never_calls_the_model(suite: Suite) -> None:
    suite.benchmark("B-CACHE", TWO_CASES.format(first="one"))
    result, calls = cached_run(suite)
    assert calls == 2
    result, calls = cached_run(suite)
    result.assert_outcomes(passed=3)
    assert calls == 0
    result.stdout.fnmatch_lines(["judge: 2 verdict(s), 0 model call(s), 2 cache hit(s), *"])
    assert (suite.root / ".llmjudge" / "cache.sqlite").is_file()


def test_a_changed_case_rubric_model_or_setting_misses(suite: Suite) -> None:
    suite.benchmark("B-CACHE", TWO_CASES.format(first="one"))
    cached_run(suite)
    suite.benchmark("B-CACHE", TWO_CASES.format(first="uno"))
    assert cached_run(suite)[1] == 1  # only the changed case
    suite.benchmark("B-CACHE", TWO_CASES.format(first="uno").replace("The output is right.", "It is right."))
    assert cached_run(suite)[1] == 2  # a changed rubric changes every case's request
    assert cached_run(suite, "--llmjudge-temperature=0.7")[1] == 2
    assert cached_run(suite, "--llmjudge-max-tokens=64")[1] == 2
    conftest = (suite.root / "conftest.py").read_text()
    suite.write("conftest.py", conftest.replace('"fake-judge"', '"other-judge"'), dedent=False)
    assert cached_run(suite)[1] == 2
    assert cached_run(suite)[1] == 0


def test_off_mode_calls_every_time_and_writes_nothing(suite: Suite) -> None:
    suite.benchmark("B-CACHE", TWO_CASES.format(first="one"))
    assert cached_run(suite, "--llmjudge-cache=off")[1] == 2
    assert cached_run(suite, "--llmjudge-cache=off")[1] == 2
    assert not (suite.root / ".llmjudge" / "cache.sqlite").exists()


def test_refresh_mode_calls_again_and_rewrites(suite: Suite) -> None:
    suite.benchmark("B-CACHE", TWO_CASES.format(first="one"))
    cached_run(suite)
    assert cached_run(suite, "--llmjudge-cache=refresh")[1] == 2
    assert cached_run(suite)[1] == 0


def test_replay_mode_errors_on_a_miss_naming_the_case_and_calls_nothing(suite: Suite) -> None:
    suite.benchmark("B-CACHE", TWO_CASES.format(first="one"))
    cached_run(suite)
    suite.benchmark("B-CACHE", TWO_CASES.format(first="changed"))
    result, calls = cached_run(suite, "--llmjudge-cache=replay")
    assert calls == 0
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*judge ERROR (cache-miss)*B-CACHE::first: no cached verdict*replay mode*"])
    assert result.ret != 0


def test_the_cache_path_is_configurable(suite: Suite) -> None:
    suite.benchmark("B-CACHE", TWO_CASES.format(first="one"))
    cached_run(suite, "--llmjudge-cache-path=elsewhere/verdicts.sqlite")
    assert (suite.root / "elsewhere" / "verdicts.sqlite").is_file()
    assert not (suite.root / ".llmjudge" / "cache.sqlite").exists()


# -- llmjudge cache stats / prune ------------------------------------------------------------


def test_cache_stats_and_prune_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.sqlite"
    cache = VerdictCache(path)
    cache.put("a", VERDICT, "openai:gpt-4o", Usage(1, 100, 20), "B1", "a")
    cache.put("b", VERDICT, "openai:gpt-4o", Usage(1, 100, 20), "B2", "b")
    cache.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE verdicts SET used = ? WHERE key = 'a'", (time.time() - 10 * 86_400,))
    assert cli_main(["cache", "--path", str(path), "stats"]) == 0
    out = capsys.readouterr().out
    assert "entries: 2 verdict(s) from 2 benchmark(s)" in out
    assert "tokens a full rerun saves: in/out 200/40" in out
    assert "2  openai:gpt-4o" in out
    assert cli_main(["cache", "--path", str(path), "prune", "--older-than", "7"]) == 0
    assert "removed 1 of 2 verdict(s) unused for 7 day(s); 1 left" in capsys.readouterr().out


def test_cache_commands_on_a_missing_cache_say_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["cache", "--path", str(tmp_path / "none.sqlite"), "stats"]) == 2
    assert "no verdict cache here" in capsys.readouterr().err
    assert not (tmp_path / "none.sqlite").exists()


def test_prune_needs_a_number_of_days(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli_main(["cache", "--path", str(tmp_path / "c.sqlite"), "prune", "--older-than", "soon"])
    assert "is not a number of days" in capsys.readouterr().err


def test_the_cache_path_defaults_to_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    VerdictCache(tmp_path / "env.sqlite").close()
    monkeypatch.setenv("LLMJUDGE_CACHE_PATH", str(tmp_path / "env.sqlite"))
    assert cli_main(["cache", "stats"]) == 0
    assert str(tmp_path / "env.sqlite") in capsys.readouterr().out


def test_replay_needs_no_model_name(suite: Suite) -> None:
    suite.benchmark("B-CACHE", TWO_CASES.format(first="one"))
    cached_run(suite)  # recorded by the hook's judge
    suite.write("conftest.py", "")  # no judge configured anywhere now

    result = suite.run("--llmjudge-cache=replay")

    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["judge: 2 verdict(s), 0 model call(s), 2 cache hit(s), *"])
    assert "no judge model" not in result.stdout.str()


def test_replay_without_a_model_name_asks_for_one_when_several_judges_answered(suite: Suite) -> None:
    suite.benchmark("B-CACHE", TWO_CASES.format(first="one"))
    cached_run(suite)
    conftest = (suite.root / "conftest.py").read_text()
    suite.write("conftest.py", conftest.replace('"fake-judge"', '"other-judge"'), dedent=False)
    suite.benchmark(
        "B-CACHE", TWO_CASES.format(first="one").replace("  - id: second\n    candidate_output: two\n", "")
    )
    cached_run(suite)  # the other judge answered the first case only
    suite.benchmark("B-CACHE", TWO_CASES.format(first="one"))
    suite.write("conftest.py", "")

    result = suite.run("--llmjudge-cache=replay")

    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*B-CACHE::first: cached verdicts of 2 judges for this request (function:fake-judge, "
            "function:other-judge); name one with --llmjudge-model*"
        ]
    )
    named = suite.run("--llmjudge-cache=replay", "--llmjudge-model=function:other-judge")
    named.assert_outcomes(passed=2, errors=1)  # the second case: other-judge never judged it
    named.stdout.fnmatch_lines(["*B-CACHE::second: no cached verdict*function:other-judge*"])


def test_a_cache_written_before_request_lookup_opens_and_keeps_its_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE verdicts (key TEXT PRIMARY KEY, model TEXT NOT NULL, benchmark TEXT NOT NULL,"
        " case_id TEXT NOT NULL, verdict TEXT NOT NULL, input_tokens INTEGER NOT NULL,"
        " output_tokens INTEGER NOT NULL, created REAL NOT NULL, used REAL NOT NULL) WITHOUT ROWID;"
        "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
        "INSERT INTO meta VALUES ('format', '1');"
    )
    key = cache_key(REQUEST.digest, "m", {})
    db.execute(
        "INSERT INTO verdicts VALUES (?, 'm', 'B1', 'c1', ?, 1, 1, 0, 0)",
        (key, json.dumps(VERDICT.to_json())),
    )
    db.commit()
    db.close()

    cache = VerdictCache(path)

    assert cache.get(key) == CachedVerdict(VERDICT, "m", 1, 1)  # with the tokens a hit saves
    assert cache.get_unnamed([cache_key(REQUEST.digest, "", {})]) == {}  # stored without its request key
    cache.close()


def test_replay_settles_named_and_unnamed_judges_in_one_lookup(tmp_path: Path) -> None:
    # A benchmark naming its own judge next to one that names none, in one replay batch.
    cache = VerdictCache(tmp_path / "c.sqlite")
    other = CompiledRequest("B2", "c1", "system", "rubric", "{}", "{}", "{}", "no_reasoning")

    async def never(request: CompiledRequest) -> tuple[Verdict, Usage]:
        raise AssertionError("replay calls no model")

    named = CaseJob("B1", "c1", REQUEST, never, "fake:judge", {})
    unnamed = CaseJob("B2", "c1", other, never, "", {})
    cache.put(named.cache_key, VERDICT, "fake:judge", Usage(), "B1", "c1", named.request_key)
    recorded = CaseJob("B2", "c1", other, never, "fake:judge", {})
    cache.put(recorded.cache_key, VERDICT, "fake:judge", Usage(), "B2", "c1", recorded.request_key)

    outcomes = settle_from_cache([named, unnamed], cache, "replay")

    assert [o.verdict if o else None for o in outcomes] == [VERDICT, VERDICT]
    cache.close()
