"""The HTTP row of ``bench/throughput.py --http``: the plugin against a real (loopback) judge.

A judge server of ours (``http_judge.py``, a process of its own) answers every chat completion
in L seconds. Against it, whole processes, interleaved so that each round sees the same machine:

- a plain ``AsyncOpenAI`` loop (the SDK pydantic-ai calls the judge through) sending the very
  requests the plugin sends, C at a time, with ``max_retries=0`` as the plugin's client;
- the same loop on a bare ``httpx`` client: what HTTP alone costs;
- ``python -m pytest benchmarks`` on N cases with ``--llmjudge-model openai:bench-judge
  --llmjudge-base-url … --llmjudge-concurrency C --llmjudge-cache=off``.

Each row gives the median wall time of its processes against the floor ceil(N/C)·L and against
the SDK loop; the server's view of each run (first request to last answer, most in flight);
for the plugin, the per-call latency it recorded in its results file against the server's own
time per call. Load averages are printed beside each round: on a shared machine they say how
far to trust the figures.
"""

from __future__ import annotations

import json
import math
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from http_judge import JudgeServer, serve_judge

MODEL = "bench-judge"

# One client process: sends the N request bodies of ``bodies.json``, C at a time, through the
# OpenAI SDK (``sdk``) or bare httpx (``httpx``), parses every verdict, prints the loop's time.
CLIENT = """\
import asyncio
import json
import sys
import time

kind, base_url, bodies_path, concurrency = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
bodies = json.loads(open(bodies_path).read())


async def main():
    gate = asyncio.Semaphore(concurrency)
    if kind == "sdk":
        from openai import AsyncOpenAI

        client = AsyncOpenAI(base_url=base_url, api_key="sk-bench", max_retries=0)

        async def one(body):
            async with gate:
                completion = await client.chat.completions.create(**body)
            return json.loads(completion.choices[0].message.content)["pass"]
    else:
        import httpx2 as httpx

        limits = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
        client = httpx.AsyncClient(base_url=base_url, limits=limits, timeout=60)

        async def one(body):
            async with gate:
                answer = await client.post("/chat/completions", json=body)
                answer.raise_for_status()
            return json.loads(answer.json()["choices"][0]["message"]["content"])["pass"]

    start = time.perf_counter()
    verdicts = await asyncio.gather(*(one(body) for body in bodies))
    seconds = time.perf_counter() - start
    await client.close() if kind == "sdk" else await client.aclose()
    return seconds, sum(verdicts)


seconds, passed = asyncio.run(main())
print(json.dumps({"seconds": seconds, "passed": passed}))
"""


@dataclass(frozen=True)
class HttpRun:
    """One process against the judge server: wall time and the server's view of it."""

    seconds: float
    cpu: float  # CPU seconds of the process (user + system): less noisy than wall time when loaded
    inner: float  # the loop alone (clients), or the judging phase the server saw (plugin)
    completions: int
    peak: int
    server_median: float  # the server's median time per completion
    in_flight: float = 0.0  # calls in flight on average while the server was answering
    call_median: float | None = None  # the plugin's median per-call latency (its results file)
    phases: str = ""  # the plugin's phases (``phase_clock``), as text
    overhead: float | None = None  # the results file's call_latency.overhead_median_s
    threads: str = ""  # CPU seconds of the plugin's threads (``phase_clock``), as text


def load() -> str:
    """The 1-minute load average, as ``uptime`` shows it."""
    return f"{os.getloadavg()[0]:.1f}"


def case_bodies(sample: dict[str, Any], cases: int) -> list[dict[str, Any]]:
    """The plugin's request for each case, from its request for case 0 (the cases differ only in
    their number: ``finding_0``, ``finding 0``, ``visit 0``)."""
    text = json.dumps(sample)
    swaps = ("finding_{}", "finding {};", "(visit {})")
    bodies = []
    for number in range(cases):
        body = text
        for swap in swaps:
            body = body.replace(swap.format(0), swap.format(number))
        bodies.append(json.loads(body))
    return bodies


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLMJUDGE_", "PYTEST_"))}
    env.pop("CI", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["OPENAI_API_KEY"] = "sk-bench"  # sent to the loopback server only
    return env


def judged_args(server: JudgeServer, concurrency: int) -> list[str]:
    return [
        "benchmarks",
        f"--llmjudge-model=openai:{MODEL}",
        f"--llmjudge-base-url={server.base_url}",
        f"--llmjudge-concurrency={concurrency}",
        "--llmjudge-cache=off",
    ]


def timed(
    command: Sequence[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Run ``command``: its wall time, its CPU seconds, and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, env=env or environment(), capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return seconds, cpu, done


def pytest_run(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall time and CPU seconds of one pytest process that must pass."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    seconds, cpu, done = timed(command, root, env)
    if done.returncode:
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return seconds, cpu


def latencies(results: Any) -> Iterator[float]:
    """Every ``latency_s`` in a results file (each judge call's time as the plugin saw it)."""
    if isinstance(results, dict):
        for key, value in results.items():
            if key == "latency_s" and isinstance(value, int | float):
                yield float(value)
            else:
                yield from latencies(value)
    elif isinstance(results, list):
        for item in results:
            yield from latencies(item)


@dataclass(frozen=True)
class ServerView:
    """What the server saw of one run since its counters were reset."""

    first_request: float
    last_answer: float
    completions: int
    peak: int
    median: float  # its median time per completion
    in_flight: float  # completions in flight on average, first request to last answer

    @property
    def phase(self) -> float:
        return self.last_answer - self.first_request if self.completions else 0.0


def server_view(server: JudgeServer) -> ServerView:
    stats = server.stats(reset=True)
    seconds = stats["seconds"]
    view = ServerView(
        stats["first_request"], stats["last_answer"], stats["completions"], stats["peak"], 0.0, 0.0
    )
    if not seconds:
        return view
    in_flight = sum(seconds) / view.phase if view.phase else 0.0
    return replace(view, median=statistics.median(seconds), in_flight=in_flight)


def phase_text(marks: dict[str, float], launched: float, ended: float, view: ServerView) -> str:
    """The plugin run's phases: start-up, collection, judging (as the server saw it), the tail."""
    started = marks.get("collection_started", launched)
    parts = [
        f"start-up {started - launched:.2f}",
        f"collection {marks.get('collection_finished', started) - started:.2f}",
        f"first call at {view.first_request - launched:.2f}",
        f"judging {view.phase:.2f}",
        f"last answer to exit {ended - view.last_answer:.2f}",
        f"(summary and results {ended - marks.get('session_finishing', ended):.2f})",
    ]
    return "phases, s: " + ", ".join(parts)


def run_plugin(root: Path, server: JudgeServer, concurrency: int, extra: Sequence[str]) -> HttpRun:
    results = root / "results.json"
    results.unlink(missing_ok=True)
    marks = root / "phases.json"
    server.stats(reset=True)
    args = [*judged_args(server, concurrency), f"--llmjudge-results={results}", "-p", "phase_clock", *extra]
    here = str(Path(__file__).resolve().parent)
    env = environment()
    env.update(
        BENCH_PHASES=str(marks), PYTHONPATH=os.pathsep.join(filter(None, (here, env.get("PYTHONPATH"))))
    )
    launched = time.time()
    seconds, cpu = pytest_run(root, *args, env=env)
    view = server_view(server)
    written = json.loads(results.read_text()) if results.exists() else {}
    seen = list(latencies(written))
    call = statistics.median(seen) if seen else None
    overhead = (written.get("call_latency") or {}).get("overhead_median_s")
    clock = json.loads(marks.read_text())
    phases = phase_text(clock, launched, launched + seconds, view)
    threads = ", ".join(f"{name} {cpu:.2f}" for name, cpu in clock.get("cpu", {}).items())
    return HttpRun(
        seconds,
        cpu,
        view.phase,
        view.completions,
        view.peak,
        view.median,
        view.in_flight,
        call,
        phases,
        overhead,
        threads,
    )


def run_client(root: Path, server: JudgeServer, kind: str, concurrency: int) -> HttpRun:
    script = root / "client_loop.py"
    script.write_text(CLIENT)
    server.stats(reset=True)
    command = [
        sys.executable,
        str(script),
        kind,
        server.base_url,
        str(root / "bodies.json"),
        str(concurrency),
    ]
    seconds, cpu, done = timed(command, root)
    if done.returncode:
        raise SystemExit(f"the {kind} loop failed:\n{done.stderr[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    view = server_view(server)
    return HttpRun(
        seconds, cpu, float(result["seconds"]), view.completions, view.peak, view.median, view.in_flight
    )


def prepare(root: Path, server: JudgeServer, concurrency: int, cases: int) -> None:
    """Accept the prompt snapshots, as a user does before judging, judging case 0 meanwhile:
    its request, as the server received it, is the pattern of the client loops' requests."""
    server.stats(reset=True)
    pytest_run(root, *judged_args(server, concurrency), "-k", "prompt or case-00000", "--snapshot-update")
    sample = server.stats(reset=True)["sample_request"]
    if sample is None:
        raise SystemExit("the plugin sent the judge no request while judging case 0")
    (root / "bodies.json").write_text(json.dumps(case_bodies(sample, cases)))


@dataclass(frozen=True)
class Settings:
    cases: int
    latency: float
    concurrency: int
    runs: int
    per_file: int
    extra: tuple[str, ...] = ()


def measure(settings: Settings, keep_alive: bool, write_project: Callable[[Path, int, int], None]) -> None:
    """Print the rows of one server setting (keep-alive on or off)."""
    s = settings
    floor = math.ceil(s.cases / s.concurrency) * s.latency
    rows: dict[str, list[HttpRun]] = {"sdk": [], "httpx": [], "plugin": []}
    loads = []
    with (
        tempfile.TemporaryDirectory(prefix="llmjudge-http-") as tmp,
        serve_judge(s.latency, keep_alive, MODEL) as server,
    ):
        root = Path(tmp)
        write_project(root, s.cases, s.per_file)
        for generated in ("conftest.py", "sleepy_judge.py"):  # the in-process judge: not this row's
            (root / generated).unlink(missing_ok=True)
        prepare(root, server, s.concurrency, s.cases)
        for _ in range(s.runs):  # interleaved, so that every row sees the same machine
            loads.append(load())
            rows["sdk"].append(run_client(root, server, "sdk", s.concurrency))
            rows["httpx"].append(run_client(root, server, "httpx", s.concurrency))
            rows["plugin"].append(run_plugin(root, server, s.concurrency, s.extra))
        loads.append(load())
    print_rows(settings, keep_alive, floor, rows, loads)


def _median(runs: list[HttpRun]) -> HttpRun:
    return sorted(runs, key=lambda run: run.seconds)[(len(runs) - 1) // 2]


def print_rows(
    settings: Settings, keep_alive: bool, floor: float, rows: dict[str, list[HttpRun]], loads: list[str]
) -> None:
    s = settings
    connection = "keep-alive" if keep_alive else "a new connection per request"
    print(
        f"HTTP judge ({connection}): N={s.cases}, L={s.latency:g} s, C={s.concurrency}; "
        f"{os.cpu_count()} CPUs; load average {' -> '.join(loads)}"
    )
    if s.extra:
        print(f"plugin run with: {shlex.join(s.extra)}")
    sdk = _median(rows["sdk"]).seconds
    print(f"{'measurement':<34}{'seconds':>9}{'x floor':>9}{'x SDK':>7}  note")
    print(f"{'floor ceil(N/C)*L':<34}{floor:>9.2f}{1:>9.2f}{floor / sdk:>7.2f}")
    names = {
        "sdk": ("AsyncOpenAI loop, process", "loop alone"),
        "httpx": ("httpx loop, process", "loop alone"),
        "plugin": ("pytest-llmjudge, process", "server saw"),
    }
    for key, (name, inner) in names.items():
        run = _median(rows[key])
        spread = ", ".join(f"{r.seconds:.2f}" for r in rows[key])
        ratios = f"{run.seconds / floor:>9.2f}{run.seconds / sdk:>7.2f}"
        print(f"{name:<34}{run.seconds:>9.2f}{ratios}  runs {spread}")
        note = f"CPU {run.cpu:.2f} s; {inner} {run.inner:.2f} s; {run.completions} calls"
        note += f", in flight {run.in_flight:.1f} on average, {run.peak} at most"
        if run.call_median is not None:
            overhead = (run.call_median - run.server_median) * 1000
            note += (
                f"; per call {run.call_median:.3f} s (server {run.server_median:.3f} s, +{overhead:.0f} ms)"
            )
        print(f"{'':<34}{'':>25}  {note}")
        if run.overhead is not None:
            note = f"results file: call_latency.overhead_median_s {run.overhead * 1000:.0f} ms"
            print(f"{'':<34}{'':>25}  {note}")
        if run.phases:
            print(f"{'':<34}{'':>25}  {run.phases}")
        if run.threads:
            print(f"{'':<34}{'':>25}  thread CPU, s: {run.threads}")
    plugin = _median(rows["plugin"]).seconds
    print(
        f"targets: plugin <= 1.15x the SDK loop ({1.15 * sdk:.2f} s) and <= 1.4x the floor "
        f"({1.4 * floor:.2f} s): {plugin / sdk:.2f}x, {plugin / floor:.2f}x"
    )
