"""Seeded fuzzing of the example suite: byte flips, truncations, duplicated lines, control
characters, deep nesting, huge numbers and Unicode line separators in the files of
``benchmarks/``, ``data/``, ``rubrics/`` and ``evaluators/``. Whatever the mutation, loading
either succeeds or raises a ``SpecError`` that renders as ``path:line:col: field: message``, in
well under a second; a pytest run over a mutated suite never shows a traceback.

A failure names its source and seed: ``mutate(random.Random(seed), data)`` reproduces the file.
"""

from __future__ import annotations

import random
import re
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import JUDGE_CONFTEST

from pytest_llmjudge.compile.request import compile_case, compile_rubric, sections_from_fields
from pytest_llmjudge.suite import files as spec
from pytest_llmjudge.suite.errors import SpecError
from pytest_llmjudge.suite.prompt_file import parse_prompt

REPO = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    p.relative_to(REPO).as_posix()
    for folder in ("benchmarks", "data", "rubrics", "evaluators")
    for p in (REPO / folder).rglob("*")
    if p.suffix in {".yaml", ".jsonl", ".md"} and p.name != "AGENTS.md"
)
MUTATIONS_PER_SOURCE = 40  # x 11 sources, about 2 s in all
RUN_SAMPLE = 6  # mutated suites run through pytest itself, about a second each
SECONDS_PER_LOAD = 10.0  # a hang guard: a load takes milliseconds (a busy CI machine: far more)

ODD = [
    "\x00",
    "\x07",
    "\x0b",
    "\x0c",
    "\x1b",
    "\x7f",
    "\x85",
    "\u2028",
    "\u2029",
    "\u202e",
    "\ufeff",
    "\uffff",
]
TOKENS = [
    "&a ", "*a", "<<: *a", "!!python/name:os.system ", "- ", ": ", "? ", "{", "}", "[", "]", "'", '"',
    "#", "|", ">", "\t", "\r", "null", "yes", "~", "2001-02-30", "0x" + "f" * 4000, "1" * 5000,
    "<!--", "-->", "**", "RUBRIC", "Automatic fail:", "\\u0000", "1e999",
]  # fmt: skip
# path:line:col: field: message, then at most one hint line; nothing unprintable in either.
RENDERED = re.compile(r"[^\n:]+:[1-9]\d*:[1-9]\d*: [^\n]+?: [^\n]+(?:\n  hint: [^\n]+)?")


def mutate(rng: random.Random, data: bytes) -> bytes:
    """One to three seeded mutations of ``data``."""
    for _ in range(rng.randint(1, 3)):
        data = rng.choice(_MUTATORS)(rng, data)
    return data


def _at(rng: random.Random, data: bytes) -> int:
    return rng.randint(0, len(data))


def _insert(data: bytes, at: int, text: str) -> bytes:
    return data[:at] + text.encode("utf-8") + data[at:]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


_MUTATORS: list[Callable[[random.Random, bytes], bytes]] = [
    lambda rng, d: d[: (i := _at(rng, d))] + bytes([rng.randrange(256)]) + d[i + 1 :],  # byte flip
    lambda rng, d: d[: _at(rng, d)],  # truncation
    lambda rng, d: b"".join(
        (line * rng.randint(2, 3) if rng.random() < 0.2 else line) for line in _lines(d)
    ),  # duplicated lines
    lambda rng, d: b"".join(line for line in _lines(d) if rng.random() > 0.15),  # deleted lines
    lambda rng, d: _insert(d, _at(rng, d), rng.choice(ODD)),  # control and separator characters
    lambda rng, d: _insert(d, _at(rng, d), rng.choice(TOKENS)),  # YAML, JSON and Markdown tokens
    lambda rng, d: _insert(d, _at(rng, d), "[" * (n := rng.choice([50, 101, 600, 30_000])) + "]" * n),
    lambda rng, d: _insert(
        d, _at(rng, d), "".join(" " * i + f"k{i}:\n" for i in range(rng.choice([20, 150])))
    ),  # deep block nesting
    lambda rng, d: _insert(d, _at(rng, d), rng.choice(["1" * 5000, "-" + "9" * 4400, "0b" + "1" * 20_000])),
    lambda rng, d: d.replace(b"\n", rng.choice(["\u2028", "\x85", "\r", "\r\n"]).encode(), rng.randint(1, 5)),
]


class Hang(Exception):
    pass


@contextmanager
def hang_guard(seconds: float) -> Iterator[None]:
    """Raise ``Hang`` if the block runs longer than ``seconds`` (a blocked read included)."""

    def expire(signum: int, frame: object) -> None:
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def repo_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    for folder in ("benchmarks", "data", "rubrics", "evaluators"):
        shutil.copytree(REPO / folder, root / folder)
    return root


def load_everything(root: Path) -> None:
    """What a run does with the files: load every benchmark and rubric, compile every request."""
    for path in sorted((root / "benchmarks").rglob("*.yaml")):
        display = path.relative_to(root).as_posix()
        benchmark = spec.load_benchmark(path, display, root)
        if benchmark.prompt_path is None:
            sections = sections_from_fields(benchmark)
        else:
            prompt = benchmark.prompt_path.relative_to(root).as_posix()
            sections = parse_prompt(spec.read_text(benchmark.prompt_path, prompt), prompt)
        compile_rubric(sections, benchmark.code)
        for case in benchmark.cases:
            compile_case(benchmark, sections, case)
    for path in sorted((root / "rubrics").glob("*.yaml")):
        spec.load_rubric(path, path.relative_to(root).as_posix())


def check_one(root: Path, source: str, seed: int) -> str | None:
    """What is wrong with loading ``source`` mutated by ``seed``, or None."""
    path = root / source
    original = path.read_bytes()
    path.write_bytes(mutate(random.Random(seed), original))
    start = time.perf_counter()
    try:
        with hang_guard(SECONDS_PER_LOAD * 5):
            load_everything(root)
    except SpecError as error:
        rendered = error.render()
        if not RENDERED.fullmatch(rendered) or not rendered.replace("\n", "").isprintable():
            return f"badly rendered error: {rendered!r}"
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    finally:
        path.write_bytes(original)
    elapsed = time.perf_counter() - start
    return f"took {elapsed:.1f} s" if elapsed > SECONDS_PER_LOAD else None


@pytest.mark.parametrize("source", SOURCES)
def test_mutated_files_load_or_fail_cleanly(repo_copy: Path, source: str) -> None:
    base = SOURCES.index(source) * 1000
    problems = {
        seed: problem
        for seed in range(base, base + MUTATIONS_PER_SOURCE)
        if (problem := check_one(repo_copy, source, seed)) is not None
    }
    assert not problems, f"{source}: {problems}"


def test_the_examples_themselves_load(repo_copy: Path) -> None:
    load_everything(repo_copy)


@pytest.mark.parametrize("seed", range(RUN_SAMPLE))
def test_mutated_suite_runs_without_a_traceback(pytester: pytest.Pytester, seed: int) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(JUDGE_CONFTEST)
    for folder in ("benchmarks", "data", "rubrics", "evaluators"):
        shutil.copytree(REPO / folder, pytester.path / folder)
    rng = random.Random(seed)
    source = rng.choice(SOURCES)
    path = pytester.path / source
    path.write_bytes(mutate(rng, path.read_bytes()))
    with hang_guard(60):
        result = pytester.runpytest("-p", "no:syrupy", "-p", "no:cacheprovider", "benchmarks")
    output = result.stdout.str()
    assert "Traceback" not in output and "INTERNALERROR" not in output, f"{source} (seed {seed}):\n{output}"
    assert result.ret in {0, 1, 2}, f"{source} (seed {seed}):\n{output}"
    errors = re.findall(r"_ ERROR collecting .* _\n(.*)\n", output)
    assert all(RENDERED.match(line) for line in errors), errors
