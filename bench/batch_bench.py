"""Row (h) of ``bench/throughput.py --batch``: N cases judged through a provider's batch API, against
the loopback server of the tests (``tests/fake_openai_batch.py``: OpenAI files, batches and
Responses endpoints; a batch is in progress for one status check, then answered at once).

Four pytest processes, each with ``--llmjudge-cache=off`` (every case a request): live calls
(``--llmjudge-concurrency C``, the comparison), ``--llmjudge-batch=on`` (submit, wait, judge),
``submit`` (submit, record, end) and ``collect`` (the recorded requests collected, none submitted
again). For ``collect`` it also times the collection itself, from the run's first batch check to
the end of the process, and gives the calls per second of that phase. The batch checks are made
every ``--batch-poll`` seconds.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"


def run(root: Path, env: dict[str, str], args: list[str]) -> float:
    """Wall time of one pytest process; it must judge every case (exit status 0)."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.monotonic() - start
    wanted = 1 if "--llmjudge-batch=submit" in args else 0  # a submit run decides nothing
    if done.returncode != wanted:
        raise SystemExit(f"pytest {args[-1]} failed ({done.returncode}):\n{done.stdout[-3000:]}")
    return seconds


def measure(
    cases: int,
    per_file: int,
    poll: float,
    concurrency: int,
    write_project: Callable[[Path, int, int], None],
    environment: Callable[[Path, float], dict[str, str]],
) -> None:
    sys.path.insert(0, str(TESTS))
    serve = importlib.import_module("fake_openai_batch").serve  # a test fixture, not a package

    with tempfile.TemporaryDirectory(prefix="llmjudge-bench-batch-") as tmp, serve(polls=1) as fake:
        root = Path(tmp)
        write_project(root, cases, per_file)
        env = {**environment(root, 0.0), "LLMJUDGE_BATCH_POLL": str(poll)}
        base = ["-q", "-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks", "--llmjudge-cache=off"]
        base += ["--llmjudge-model=gpt-4o-mini", f"--llmjudge-base-url={fake.url}/v1"]
        live_s = run(root, env, [*base, f"--llmjudge-concurrency={concurrency}"])  # the same calls, live
        live = fake.live
        on = run(root, env, [*base, "--llmjudge-batch=on"])
        on_batches, on_batched, on_live = fake.created_batches, fake.batched, fake.live - live
        submit = run(root, env, [*base, "--llmjudge-batch=submit"])
        created = fake.created_batches
        begun = len(fake.requests)
        collect = run(root, env, [*base, "--llmjudge-batch=collect"])
        ended = time.monotonic()
        checks = [
            r.at for r in fake.requests[begun:] if r.method == "GET" and r.path.startswith("/v1/batches")
        ]
        again = fake.created_batches - created
        collected = fake.batched - on_batched
    phase = ended - min(checks)
    rows = [
        ("(h) live calls, for comparison", live_s, f"{live} live calls, {concurrency} at a time"),
        (
            "    --llmjudge-batch=on, empty cache",
            on,
            f"{on_batched} in {on_batches} batch(es), {on_live} live",
        ),
        ("    --llmjudge-batch=submit", submit, f"{created - on_batches} batch(es) submitted, ends pending"),
        (
            "    --llmjudge-batch=collect",
            collect,
            f"{collected} collected, {again} batch(es) submitted again",
        ),
        ("    collection: first check -> exit", phase, f"{collected / phase:.0f} calls/s"),
    ]
    print(f"(h) batch API, N={cases} cases, loopback fake_openai_batch, batch checks every {poll:g} s")
    print(f"{'measurement':<42}{'seconds':>9}  note")
    for name, seconds, note in rows:
        print(f"{name:<42}{seconds:>9.2f}  {note}")
