"""Throughput of pytest-llmjudge against its floor and against pydantic-evals' ``Dataset.evaluate``.

One run generates a benchmark suite of N cases and judges it with a ``FunctionModel`` that
sleeps L seconds (``asyncio.sleep``) and passes the case, then measures:

(a) ``pytest benchmarks --llmjudge-concurrency C`` with an empty cache: wall time of the whole
    pytest process (start-up, pydantic-ai import, collection, judging, exit), median of
    ``--cold-runs`` runs, and its judging phase (first call to last verdict), against the floor
    ceil(N/C)·L;
(b) pydantic-evals ``Dataset.evaluate`` with ``LLMJudge`` on the same model, cases and
    ``max_concurrency=C``: wall time of the whole script, and of the ``evaluate`` call alone
    (as many runs as (a), each right after one of them: both see the same machine);
(c) the same ``pytest benchmarks`` again, every verdict cached: wall time and model calls,
    with the compiled-prompt snapshots checked (syrupy on, as users run it) and without;
(d) start-up time the plugin adds to a pytest run that collects no benchmark: median over
    interleaved pairs of runs with the plugin and with ``-p no:llmjudge``;
(e) for reference, ``pytest`` on one cached case of the suite: the fixed cost of a run
    (Python, pytest and pydantic-ai start-up, exit) that (a) and (c) include;
(f) ``--llmjudge-repeats K`` with an empty cache (K·N model calls, judging phase against
    K times the floor), then the same run again with every sample cached (0 calls);
(g) the task step: the same suite without stored outputs, each case's output produced by a
    task that sleeps L seconds (``--llmjudge-task-concurrency C``) before the judge of latency L:
    the pipeline's phase (first task call to last verdict) against max(task floor, judge floor)
    + L, which two phases one after the other (task floor + judge floor) would exceed.

    python bench/throughput.py [--cases 1000] [--latency 0.25] [--concurrency 32]

With ``--http`` it measures instead the plugin against a loopback OpenAI-compatible judge
answering in L seconds (``bench/http_judge.py``), beside a plain ``AsyncOpenAI`` loop and a bare
httpx loop sending the same requests C at a time (``bench/http_bench.py``), each whole process,
``--cold-runs`` times, with the server keeping connections alive and then closing each:

    python bench/throughput.py --http [-n 1000] [--latency 0.25] [--concurrency 32] [--no-keep-alive]

With ``--scale`` it measures instead how a run grows with its size: N = 2,500, 5,000, 10,000 and
20,000 instant cases (L = 0), 10 % of them failing, each with an empty cache and then all
cached, printing each row's wall time, judging phase and growth ratio per doubling (target
<= 2.2x; 2.0x is linear). Then, side by side, N against 2N with an empty cache for: a
synchronous ``def`` judge (pydantic-ai runs it in a worker thread) on 3,000 and 6,000 cases,
and ``--llmjudge-repeats`` 5,000 and 10,000 on 3 cases (an instant ``async def`` judge).

    python bench/throughput.py --scale [--scale-max 20000] [--scale-rows all|cases|doubling]

With ``--batch`` it measures instead row (h), N cases judged through a provider's batch API against
the loopback server of the tests (``bench/batch_bench.py``): a live run for comparison, an
``--llmjudge-batch=on`` run, then ``submit`` and ``collect`` runs, with the collection's calls per second:

    python bench/throughput.py --batch [-n 1000] [--batch-poll 0.2]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PROMPT = """\
SYSTEM: You are a neutral medical documentation evaluator.
You evaluate one behavior at a time.
Use only the information in the provided inputs.

---

BEHAVIOR: negation_preserved

DESCRIPTION:
Whether findings the narrative negates are recorded as absent in the output.

EVALUATION SCOPE:
Include:
- Symptoms and findings the ground truth marks as negated.
Ignore:
- Findings the ground truth does not mention.

RUBRIC

Automatic fail if any of the following are true:
- The output records as present a finding that the ground truth marks as absent.

Pass conditions (all must be satisfied):
1. Every finding the ground truth marks as absent is absent or negated in the output.

Uncertainty policy:
If the information is ambiguous or incomplete, set pass = false and say so in the reason.

Respond ONLY with compact JSON: {"pass": true|false, "reason": "<50-200 characters citing the evidence>"}
"""

# The judge of every measured run: sleeps LATENCY seconds, then passes the case. It counts its
# calls and notes when the first one started and the last one ended (the judging phase of (a)).
JUDGE_MODULE = """\
import asyncio
import os
import time

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

LATENCY = float(os.environ["BENCH_LATENCY"])
CALLS = [0]
FIRST_START = [0.0]
LAST_END = [0.0]


async def judge(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    CALLS[0] += 1
    FIRST_START[0] = FIRST_START[0] or time.time()
    await asyncio.sleep(LATENCY)
    LAST_END[0] = time.time()
    args = {"pass": True, "reason": "every negated finding stays absent in the output", "score": 1.0}
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


MODEL = FunctionModel(judge, model_name="sleepy-judge")
TASK_CALLS = [0]
FIRST_TASK = [0.0]


async def task(case):  # the system under test of row (g): LATENCY seconds, then an answer
    TASK_CALLS[0] += 1
    FIRST_TASK[0] = FIRST_TASK[0] or time.time()
    await asyncio.sleep(LATENCY)
    return {case.id: False}
"""

CONFTEST = """\
import json
import os

from sleepy_judge import CALLS, FIRST_START, FIRST_TASK, LAST_END, MODEL, TASK_CALLS


def pytest_llmjudge_model(config):
    return MODEL


def pytest_unconfigure(config):
    record = {"calls": CALLS[0], "first_call": FIRST_START[0], "last_verdict": LAST_END[0],
              "task_calls": TASK_CALLS[0], "first_task": FIRST_TASK[0]}
    with open(os.environ["BENCH_RECORD"], "w") as out:
        json.dump(record, out)
"""

EVALUATE = """\
import json
import sys
import time

from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import LLMJudge

from sleepy_judge import CALLS, MODEL

cases_path, rubric_path, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [json.loads(line) for line in open(cases_path)]
outputs = {row["source_narrative"]: {"CANDIDATE_OUTPUT": row["candidate_output"]} for row in rows}
rubric = open(rubric_path).read()
judge = LLMJudge(rubric=rubric, model=MODEL, include_input=True, include_expected_output=True)
dataset = Dataset(
    name="throughput",
    cases=[
        Case(
            name=row["id"],
            inputs={"SOURCE_NARRATIVE": row["source_narrative"]},
            expected_output={"GROUND_TRUTH": row["ground_truth"]},
        )
        for row in rows
    ],
    evaluators=[judge],
)


async def task(inputs):
    return outputs[inputs["SOURCE_NARRATIVE"]]


start = time.perf_counter()
report = dataset.evaluate_sync(task, max_concurrency=concurrency, progress=False)
elapsed = time.perf_counter() - start
failures = sum(len(case.evaluator_failures) for case in report.cases) + len(report.failures)
print(json.dumps({"seconds": elapsed, "calls": CALLS[0], "cases": len(report.cases), "failures": failures}))
"""


@dataclass(frozen=True)
class Run:
    """Wall time of a whole process, its model calls, and the part of it spent judging."""

    seconds: float
    calls: int
    run_phase: float = 0.0
    task_calls: int = 0
    pipeline_phase: float = 0.0  # first task call -> last verdict (row (g))


def write_project(root: Path, cases: int, per_file: int, task: bool = False) -> None:
    """A benchmark suite of ``cases`` cases, ``per_file`` to a benchmark file, one shared prompt file;
    with ``task`` the cases have no stored output and the benchmarks' task produces it."""
    (root / "benchmarks").mkdir(parents=True)
    (root / "evaluators").mkdir()
    (root / "evaluators" / "negation_prompt.md").write_text(PROMPT)
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "conftest.py").write_text(CONFTEST)
    (root / "sleepy_judge.py").write_text(JUDGE_MODULE)
    rows = []
    for number in range(cases):
        finding = f"finding_{number}"
        narrative = f"Patient denies {finding.replace('_', ' ')}; no other complaints (visit {number})."
        rows.append(
            {
                "id": f"case-{number:05d}",
                "source_narrative": narrative,
                "ground_truth": {finding: False},
                "candidate_output": {finding: False},
            }
        )
    (root / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    for first in range(0, cases, per_file):
        code = f"B-{first // per_file:04d}"
        lines = [
            f"code: {code}",
            f"label: Negation preserved, batch {first // per_file}",
            "threshold: 1.0",
            "evaluator_type: llm_judge",
            "llm_prompt_file: evaluators/negation_prompt.md",
            *(["task: sleepy_judge:task"] if task else []),
            "cases:",
        ]
        keys = (
            ("source_narrative", "ground_truth")
            if task
            else ("source_narrative", "ground_truth", "candidate_output")
        )
        for row in rows[first : first + per_file]:
            lines.append(f"  - id: {row['id']}")
            for key in keys:
                lines.append(f"    {key}: {json.dumps(row[key])}")
        (root / "benchmarks" / f"{code}.yaml").write_text("\n".join(lines) + "\n")


def environment(root: Path, latency: float) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLMJUDGE_", "PYTEST_"))}
    path = os.pathsep.join(filter(None, (str(root), os.environ.get("PYTHONPATH"))))  # a checkout to measure
    env.update(BENCH_LATENCY=str(latency), BENCH_RECORD=str(root / "record.json"), PYTHONPATH=path)
    env.pop("CI", None)
    # Measured as installed Python runs: modules compiled once and read from __pycache__ after.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_pytest(root: Path, env: dict[str, str], *args: str, check: bool = True) -> Run:
    """Wall time of one pytest process, with its model calls and run phase when it judged;
    ``check=False`` accepts failing cases (exit status 1)."""
    record = root / "record.json"
    record.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in ((0, 5) if check else (0, 1, 5)):
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    if not record.exists():
        return Run(seconds, 0)
    data = json.loads(record.read_text())
    phase = data["last_verdict"] - data["first_call"] if data["last_verdict"] else 0.0
    pipeline = (
        data["last_verdict"] - data["first_task"] if data["first_task"] and data["last_verdict"] else 0.0
    )
    return Run(seconds, int(data["calls"]), phase, int(data["task_calls"]), pipeline)


def _median_run(runs: list[Run]) -> Run:
    """The run of median wall time (the middle one of an odd number)."""
    return sorted(runs, key=lambda run: run.seconds)[(len(runs) - 1) // 2]


def run_evaluate(root: Path, env: dict[str, str], concurrency: int) -> Run:
    script = root / "evaluate_bench.py"
    script.write_text(EVALUATE)
    rubric = root / "evaluators" / "negation_prompt.md"
    command = [sys.executable, str(script), str(root / "cases.jsonl"), str(rubric), str(concurrency)]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    process = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"Dataset.evaluate failed:\n{done.stderr[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["failures"]:
        raise SystemExit(f"Dataset.evaluate: {result['failures']} evaluation(s) failed")
    return Run(process, int(result["calls"]), float(result["seconds"]))


def startup_added(root: Path, env: dict[str, str], pairs: int) -> tuple[float, float, float]:
    """Medians of: a benchmark-free run without the plugin, with it, and the paired difference."""
    project = root / "plain"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    env = dict(env, PYTHONPATH="")
    without: list[float] = []
    with_plugin: list[float] = []
    for _ in range(pairs):
        without.append(run_pytest(project, env, "-p", "no:llmjudge").seconds)
        with_plugin.append(run_pytest(project, env).seconds)
    added = statistics.median(b - a for a, b in zip(without, with_plugin, strict=True))
    return statistics.median(without), statistics.median(with_plugin), added


FAILING_JUDGE = """
import re as _re

_judge_all_pass = judge


async def judge(messages, info):
    response = await _judge_all_pass(messages, info)
    text = "".join(str(getattr(p, "content", "")) for m in messages for p in m.parts)
    if _re.search(r"visit \\d*0\\)", text):  # every tenth case fails
        response.parts[0].args["pass"] = False
    return response


MODEL = FunctionModel(judge, model_name="sleepy-judge")
"""


def scale(concurrency: int, largest: int) -> None:
    """Rows for N = 2,500 ... ``largest`` instant cases, 10 % failing: empty cache, then cached."""
    sizes = []
    size = 2500
    while size <= largest:
        sizes.append(size)
        size *= 2
    print(f"instant judge (L=0), 10 % failing, C={concurrency}; {os.cpu_count()} CPUs")
    heads = ("empty s", "x prev", "judging s", "x prev", "cached s", "x prev")
    print(f"{'N':>7}" + "".join(f"{head:>11}" for head in heads))
    previous: tuple[float, float, float] | None = None
    for cases in sizes:
        with tempfile.TemporaryDirectory(prefix="llmjudge-scale-") as tmp:
            root = Path(tmp)
            write_project(root, cases, 50)
            judge = root / "sleepy_judge.py"
            judge.write_text(judge.read_text() + FAILING_JUDGE)
            env = environment(root, 0.0)
            judged = ["benchmarks", "-p", "no:syrupy", f"--llmjudge-concurrency={concurrency}"]
            empty = run_pytest(root, env, *judged, check=False)
            cached = run_pytest(root, env, *judged, check=False)
        row = (empty.seconds, empty.run_phase, cached.seconds)
        cells = []
        for now, before in zip(row, previous or (0.0, 0.0, 0.0), strict=True):
            cells += [f"{now:>11.1f}", f"{now / before:>10.2f}x" if before else f"{'':>11}"]
        print(f"{cases:>7}" + "".join(cells) + f"   ({empty.calls} calls, then {cached.calls})")
        previous = row


# The README's judge hook shape: a plain ``def`` (pydantic-ai runs it in a worker thread).
SYNC_JUDGE = """

def judge(messages, info):
    CALLS[0] += 1
    FIRST_START[0] = FIRST_START[0] or time.time()
    LAST_END[0] = time.time()
    args = {"pass": True, "reason": "every negated finding stays absent in the output", "score": 1.0}
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


MODEL = FunctionModel(judge, model_name="sync-judge")
"""


def doubling(concurrency: int, sync_cases: int, repeats: int, repeat_cases: int = 3) -> None:
    """N against 2N, empty cache: a sync ``def`` judge on ``sync_cases`` cases, and
    ``--llmjudge-repeats`` ``repeats`` on ``repeat_cases`` cases."""
    rows = [  # (name, N, cases judged N times or None for N cases, judge added to the module)
        ("sync def judge, N cases", sync_cases, None, SYNC_JUDGE),
        (f"sync def judge, repeats N, {repeat_cases} cases", repeats, repeat_cases, SYNC_JUDGE),
        (f"async judge, repeats N, {repeat_cases} cases", repeats, repeat_cases, ""),
    ]
    print(f"N against 2N, empty cache, instant judge (L=0), C={concurrency}; {os.cpu_count()} CPUs")
    heads = ("N", "N s", "2N", "2N s", "x", "judging x", "CPU x")
    print(f"{'row':<38}" + "".join(f"{head:>10}" for head in heads))
    for name, size, cases, judge_code in rows:
        runs, cpu = [], []  # CPU seconds of each process: less noisy than wall time on a busy machine
        for n in (size, 2 * size):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            with tempfile.TemporaryDirectory(prefix="llmjudge-scale-") as tmp:
                root = Path(tmp)
                write_project(root, n if cases is None else cases, 50)
                judge = root / "sleepy_judge.py"
                judge.write_text(judge.read_text() + judge_code)
                judged = ["benchmarks", "-p", "no:syrupy", f"--llmjudge-concurrency={concurrency}"]
                if cases is not None:
                    judged.append(f"--llmjudge-repeats={n}")
                runs.append(run_pytest(root, environment(root, 0.0), *judged))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        small, large = runs
        ratio = large.seconds / small.seconds
        phase = f"{large.run_phase / small.run_phase:.2f}x" if small.run_phase else "-"
        cells = (
            f"{size}",
            f"{small.seconds:.1f}",
            f"{2 * size}",
            f"{large.seconds:.1f}",
            f"{ratio:.2f}x",
            phase,
            f"{cpu[1] / cpu[0]:.2f}x",
        )
        print(f"{name:<38}" + "".join(f"{cell:>10}" for cell in cells) + f"   ({large.calls} calls)")
    print("target: x <= 2.20 per doubling (2.00 is linear)")


def http_rows(args: argparse.Namespace) -> None:
    """``--http``: the rows of ``http_bench``, for keep-alive on, off, or both."""
    import shlex

    from http_bench import Settings, measure

    settings = Settings(
        args.cases,
        args.latency,
        args.concurrency,
        args.cold_runs,
        args.per_file,
        tuple(shlex.split(args.http_args)),
    )
    for number, keep_alive in enumerate((True, False) if args.keep_alive is None else (args.keep_alive,)):
        if number:
            print()
        measure(settings, keep_alive, write_project)


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("-n", "--cases", type=int, default=1000, help="N, cases to judge (default 1000)")
    parser.add_argument("--latency", type=float, default=0.25, help="L, seconds per call (default 0.25)")
    parser.add_argument("--concurrency", type=int, default=32, help="C, judge calls in flight (default 32)")
    parser.add_argument("--per-file", type=int, default=50, help="cases per benchmark file (default 50)")
    parser.add_argument(
        "--cold-runs", type=int, default=3, help="runs of (a) and (b), medians reported (default 3)"
    )
    parser.add_argument("--cached-runs", type=int, default=3, help="runs of (c), median reported (default 3)")
    parser.add_argument("--startup-pairs", type=int, default=21, help="run pairs for (d) (default 21)")
    parser.add_argument("--repeats", type=int, default=3, help="K of row (f), samples per case (default 3)")
    parser.add_argument("--scale", action="store_true", help="growth rows N = 2,500 ... 20,000 instead")
    parser.add_argument("--scale-max", type=int, default=20000, help="largest N of --scale (default 20000)")
    parser.add_argument(
        "--scale-rows",
        choices=("all", "cases", "doubling"),
        default="all",
        help="--scale: the growth rows, the sync-judge and repeats doublings, or both (default all)",
    )
    parser.add_argument(
        "--scale-sync", type=int, default=3000, help="--scale: N cases of the sync judge row (default 3000)"
    )
    parser.add_argument(
        "--scale-repeats", type=int, default=5000, help="--scale: N repeats of the repeats row (default 5000)"
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help="the HTTP row instead: a loopback OpenAI-compatible judge, the SDK loop and the plugin",
    )
    parser.add_argument(
        "--keep-alive",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="--http: the server keeps connections open, or closes each (default: both, one after the other)",
    )
    parser.add_argument(
        "--http-args",
        default="",
        help="--http: more options for the plugin's pytest run, e.g. --http-args='-s -p no:syrupy'",
    )
    parser.add_argument(
        "--batch",
        action="store_true",
        help="row (h) instead: N cases through a batch API (on, submit, collect) against a loopback server",
    )
    parser.add_argument(
        "--batch-poll", type=float, default=0.2, help="--batch: seconds between batch checks (default 0.2)"
    )
    args = parser.parse_args()
    if args.batch:
        from batch_bench import measure

        measure(args.cases, args.per_file, args.batch_poll, args.concurrency, write_project, environment)
        return
    if args.http:
        http_rows(args)
        return
    if args.scale:
        if args.scale_rows in ("all", "cases"):
            scale(args.concurrency, args.scale_max)
        if args.scale_rows == "all":
            print()
        if args.scale_rows in ("all", "doubling"):
            doubling(args.concurrency, args.scale_sync, args.scale_repeats)
        return

    floor = math.ceil(args.cases / args.concurrency) * args.latency
    with tempfile.TemporaryDirectory(prefix="llmjudge-bench-") as tmp:
        root = Path(tmp)
        write_project(root, args.cases, args.per_file)
        env = environment(root, args.latency)
        # Accept the compiled-prompt snapshots once, as a user does before judging.
        run_pytest(root, env, "benchmarks", "-k", "prompt", "--snapshot-update")
        judged = ["benchmarks", f"--llmjudge-concurrency={args.concurrency}"]
        colds, evaluates = [], []
        for _ in range(args.cold_runs):  # interleaved, so that both see the same machine
            shutil.rmtree(root / ".llmjudge", ignore_errors=True)
            colds.append(run_pytest(root, env, *judged))
            evaluates.append(run_evaluate(root, env, args.concurrency))
        cold, evaluate = _median_run(colds), _median_run(evaluates)
        cached = [run_pytest(root, env, *judged) for _ in range(args.cached_runs)]
        bare = [run_pytest(root, env, *judged, "-p", "no:syrupy") for _ in range(args.cached_runs)]
        one = root / "benchmarks" / "B-0000.yaml::B-0000::case-00000"
        fixed = [run_pytest(root, env, str(one.relative_to(root))) for _ in range(args.cached_runs)]
        shutil.rmtree(root / ".llmjudge", ignore_errors=True)  # (f): every sample judged afresh
        repeat = [*judged, "-p", "no:syrupy", f"--llmjudge-repeats={args.repeats}"]
        repeated, repeated_cached = run_pytest(root, env, *repeat), run_pytest(root, env, *repeat)
        without, with_plugin, added = startup_added(root, env, args.startup_pairs)
    with tempfile.TemporaryDirectory(prefix="llmjudge-bench-task-") as tmp:
        task_root = Path(tmp)
        write_project(task_root, args.cases, args.per_file, task=True)
        task_env = environment(task_root, args.latency)
        tasked = [*judged, "-p", "no:syrupy", f"--llmjudge-task-concurrency={args.concurrency}"]
        pipelined, pipelined_cached = (
            run_pytest(task_root, task_env, *tasked),
            run_pytest(task_root, task_env, *tasked),
        )

    cached_s = statistics.median(r.seconds for r in cached)
    bare_s = statistics.median(r.seconds for r in bare)
    cached_calls = sum(r.calls for r in cached) + sum(r.calls for r in bare)
    fixed_s = statistics.median(r.seconds for r in fixed)
    rows = [
        ("floor ceil(N/C)*L", floor, ""),
        (
            "(a) pytest benchmarks, empty cache",
            cold.seconds,
            f"median of {len(colds)}; {cold.calls} model calls",
        ),
        ("    judging: first call -> last verdict", cold.run_phase, "calls start while files are collected"),
        (
            "(b) Dataset.evaluate + LLMJudge, process",
            evaluate.seconds,
            f"median of {len(evaluates)}; {evaluate.calls} model calls",
        ),
        ("    the evaluate() call alone", evaluate.run_phase, "imports, start-up and exit not counted"),
        ("(c) pytest benchmarks, all cached", cached_s, f"median of {len(cached)}"),
        ("    the same with -p no:syrupy", bare_s, f"median of {len(bare)}; {cached_calls} calls in all (c)"),
        ("(e) pytest on one cached case", fixed_s, "start-up (pytest, pydantic-ai) and exit"),
        (
            f"(f) --llmjudge-repeats {args.repeats}, empty cache",
            repeated.seconds,
            f"{repeated.calls} model calls ({args.repeats} x {args.cases}); "
            f"judging {repeated.run_phase:.2f} s vs floor x K {args.repeats * floor:.2f} s",
        ),
        (
            "    rerun, every sample cached",
            repeated_cached.seconds,
            f"{repeated_cached.calls} model calls",
        ),
        (
            "(g) task L then judge L, empty cache",
            pipelined.seconds,
            f"{pipelined.task_calls} task calls, {pipelined.calls} judge calls",
        ),
        (
            "    pipeline: first task -> last verdict",
            pipelined.pipeline_phase,
            f"vs max(floors) + L = {floor + args.latency:.2f} s; two phases: {2 * floor:.2f} s",
        ),
        (
            "    rerun, outputs and verdicts cached",
            pipelined_cached.seconds,
            f"{pipelined_cached.task_calls} task calls, {pipelined_cached.calls} judge calls",
        ),
    ]
    print(
        f"N={args.cases} cases, L={args.latency:g} s, C={args.concurrency}; {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}"
    )
    print()
    print(f"{'measurement':<42}{'seconds':>9}  {'x floor':>7}  note")
    for name, seconds, note in rows:
        print(f"{name:<42}{seconds:>9.2f}  {seconds / floor:>7.2f}  {note}")
    pairs = f"median of {args.startup_pairs}"
    print(f"{'(d) no benchmarks, -p no:llmjudge':<42}{without:>9.3f}  {'':>7}  {pairs}")
    print(f"{'    plugin on':<42}{with_plugin:>9.3f}  {'':>7}  {pairs}")
    print(f"{'    start-up added (paired median)':<42}{added * 1000:>7.0f}ms")
    print()
    print(
        f"(a)/(b): whole processes {cold.seconds / evaluate.seconds:.2f}, "
        f"judging phase / evaluate() call {cold.run_phase / evaluate.run_phase:.2f}"
    )
    spread = ", ".join(f"{r.seconds:.2f}" for r in colds)
    print(f"(a) runs: {spread} s; (b) runs: {', '.join(f'{r.seconds:.2f}' for r in evaluates)} s")
    print(f"targets: (a) <= {1.2 * floor:.2f} s and < (b); (c) <= 3 s with 0 calls; (d) <= 30 ms")
    print(f"(g) pipeline phase / (max(floors) + L): {pipelined.pipeline_phase / (floor + args.latency):.2f}")


if __name__ == "__main__":
    main()
