"""A cache file that is damaged, foreign or edited never answers wrongly and never crashes a run."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from fake_openai import benchmark_yaml

from pytest_llmjudge.execution.cache import CacheError, VerdictCache
from pytest_llmjudge.judging.verdict import Usage, Verdict

VERDICT = Verdict(False, "the output is wrong")


def filled(path: Path, entries: int = 400) -> None:
    cache = VerdictCache(path)
    for i in range(entries):
        cache.put(f"k{i}", VERDICT, "m", Usage(1, 1, 1), "B1", f"c{i}" * 40)
    cache.close()


def test_an_edited_verdict_of_the_wrong_type_is_a_miss_not_a_pass(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    filled(path, 1)
    with sqlite3.connect(path) as db:
        edited = json.dumps({"pass": "false", "reason": "edited", "score": None})
        db.execute("UPDATE verdicts SET verdict = ?", (edited,))
    cache = VerdictCache(path)
    assert cache.get("k0") is None  # re-judged, and the new verdict replaces it
    cache.close()


@pytest.mark.parametrize(
    "data",
    [
        {"pass": 1, "reason": "r"},
        {"pass": True, "reason": 5},
        {"pass": True, "reason": "r", "score": "high"},
        {"pass": True, "reason": "r", "uncertain": "no"},
        {"pass": True, "reason": "r", "confidence": "very"},
        ["pass"],
    ],
)
def test_verdicts_are_read_with_strict_types(data: object) -> None:
    with pytest.raises(TypeError):
        Verdict.from_json(data)


def test_a_page_of_zeros_mid_file_is_refused_on_open(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    filled(path)
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 4 * page
    data[2 * page : 3 * page] = bytes(page)
    path.write_bytes(bytes(data))
    with pytest.raises(CacheError, match="not a usable verdict cache"):
        VerdictCache(path)


def test_a_foreign_verdicts_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE verdicts (id INTEGER PRIMARY KEY, text TEXT)")
    with pytest.raises(CacheError, match="not a usable verdict cache"):
        VerdictCache(path)


RUN_BENCHMARK = benchmark_yaml(2)


@pytest.mark.parametrize("how", ["zeros", "foreign"])
@pytest.mark.parametrize("args", [[], ["-k", "c0"], ["-n", "2"]], ids=["plain", "-k", "-n2"])
def test_a_damaged_cache_is_one_usage_error_in_every_mode(
    pytester: pytest.Pytester, how: str, args: list[str]
) -> None:
    from conftest import JUDGE_CONFTEST

    pytester.makeini("[pytest]\n")
    pytester.makeconftest(JUDGE_CONFTEST)
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(RUN_BENCHMARK)
    path = pytester.path / ".llmjudge" / "cache.sqlite"
    path.parent.mkdir()
    if how == "zeros":
        filled(path)
        data = bytearray(path.read_bytes())
        data[2 * 4096 : 3 * 4096] = bytes(4096)
        path.write_bytes(bytes(data))
    else:
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE verdicts (id INTEGER PRIMARY KEY, text TEXT)")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks", *args)
    out = result.stdout.str() + result.stderr.str()
    assert "not a usable verdict cache" in out, out
    assert "Traceback" not in out and "INTERNALERROR" not in out, out


def test_replay_without_a_cache_file_creates_none(pytester: pytest.Pytester) -> None:
    from conftest import JUDGE_CONFTEST

    pytester.makeini("[pytest]\n")
    pytester.makeconftest(JUDGE_CONFTEST)
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(RUN_BENCHMARK)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "--llmjudge-cache=replay", "benchmarks"
    )
    assert "no cached verdict" in result.stdout.str()
    assert not (pytester.path / ".llmjudge" / "cache.sqlite").exists()


@pytest.mark.parametrize("command", ["stats", "prune"])
def test_cache_commands_on_a_foreign_file_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    from pytest_llmjudge.cli.main import main as cli_main

    path = tmp_path / "cache.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE verdicts (id INTEGER PRIMARY KEY, text TEXT)")
    extra = ["--older-than", "30"] if command == "prune" else []
    code = cli_main(["cache", "--path", str(path), command, *extra])
    assert code != 0 and "not a usable verdict cache" in capsys.readouterr().err
