"""Throughput of pytest-llmjudge against its floor and against pydantic-evals' ``Dataset.evaluate``.

One run measures, with a ``FunctionModel`` judge that sleeps ``L`` seconds (``asyncio.sleep``):

(a) ``pytest benchmarks`` on ``N`` generated cases with ``--llmjudge-concurrency C`` (empty cache),
    against the floor ``ceil(N/C)·L``; wall time of the whole pytest process;
(b) pydantic-evals ``Dataset.evaluate`` with ``LLMJudge`` on the same model, cases and
    ``max_concurrency=C``; wall time of the ``evaluate`` call alone (imports not counted);
(c) the same ``pytest benchmarks`` again, every verdict cached: wall time and model calls;
(d) start-up time the plugin adds to a pytest run that collects no benchmark: median of
    interleaved runs with the plugin and with ``-p no:llmjudge``.

    python bench/throughput.py [--cases 1000] [--latency 0.25] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
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
If the information is ambiguous or incomplete, set pass = false and explain that the case is uncertain in the reason.

Respond ONLY with compact JSON: {"pass": true|false, "reason": "<50-200 characters citing the evidence>"}
"""

# The judge every measured run uses: sleeps LATENCY seconds, then passes the case. Counts its calls.
JUDGE_MODULE = """\
import asyncio
import os

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

LATENCY = float(os.environ["BENCH_LATENCY"])
CALLS = [0]


async def judge(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    CALLS[0] += 1
    await asyncio.sleep(LATENCY)
    args = {"pass": True, "reason": "every negated finding stays absent in the output"}
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


MODEL = FunctionModel(judge, model_name="sleepy-judge")
"""

CONFTEST = """\
import os
from pathlib import Path

from sleepy_judge import CALLS, MODEL


def pytest_llmjudge_model(config):
    return MODEL


def pytest_sessionfinish(session):
    Path(os.environ["BENCH_CALLS_FILE"]).write_text(str(CALLS[0]))
"""

EVALUATE = """\
import asyncio
import json
import sys
import time

from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import LLMJudge

from sleepy_judge import CALLS, MODEL

cases_path, rubric_path, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [json.loads(line) for line in open(cases_path)]
rubric = open(rubric_path).read()
dataset = Dataset(
    name="throughput",
    cases=[
        Case(name=r["id"], inputs={"SOURCE_NARRATIVE": r["source_narrative"]},
             expected_output={"GROUND_TRUTH": r["ground_truth"]})
        for r in rows
    ],
    evaluators=[LLMJudge(rubric=rubric, model=MODEL, include_input=True, include_expected_output=True)],
)
outputs = {r["source_narrative"]: {"CANDIDATE_OUTPUT": r["candidate_output"]} for r in rows}


async def task(inputs):
    return outputs[inputs["SOURCE_NARRATIVE"]]


start = time.perf_counter()
report = dataset.evaluate_sync(task, max_concurrency=concurrency, progress=False)
elapsed = time.perf_counter() - start
print(json.dumps({"seconds": elapsed, "calls": CALLS[0], "cases": len(report.cases)}))
"""


@dataclass(frozen=True)
class Run:
    seconds: float
    calls: int
    output: str


def write_project(root: Path, cases: int, per_file: int) -> None:
    """A benchmark suite of ``cases`` cases, ``per_file`` to a benchmark file, one shared prompt file."""
    (root / "benchmarks").mkdir(parents=True)
    (root / "evaluators").mkdir()
    (root / "evaluators" / "negation_prompt.md").write_text(PROMPT)
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "conftest.py").write_text(CONFTEST)
    (root / "sleepy_judge.py").write_text(JUDGE_MODULE)
    rows = []
    for number in range(cases):
        finding = f"finding_{number}"
        rows.append(
            {
                "id": f"case-{number:05d}",
                "source_narrative": f"Patient denies {finding.replace('_', ' ')}; no other complaints (visit {number}).",
                "ground_truth": {finding: False},
                "candidate_output": {finding: False},
            }
        )
    with (root / "cases.jsonl").open("w") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    for first in range(0, cases, per_file):
        code = f"B-{first // per_file:04d}"
        lines = [
            f"code: {code}",
            f"label: Negation preserved, batch {first // per_file}",
            "threshold: 1.0",
            "evaluator_type: llm_judge",
            "llm_prompt_file: evaluators/negation_prompt.md",
            "cases:",
        ]
        for row in rows[first : first + per_file]:
            lines.append(f"  - id: {row['id']}")
            lines.append(f"    source_narrative: {json.dumps(row['source_narrative'])}")
            lines.append(f"    ground_truth: {json.dumps(row['ground_truth'])}")
            lines.append(f"    candidate_output: {json.dumps(row['candidate_output'])}")
        (root / "benchmarks" / f"{code}.yaml").write_text("\n".join(lines) + "\n")


def environment(root: Path, latency: float) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        BENCH_LATENCY=str(latency),
        BENCH_CALLS_FILE=str(root / "calls.txt"),
        PYTHONPATH=str(root),
        PYTHONDONTWRITEBYTECODE="",
    )
    for name in [n for n in env if n.startswith("LLMJUDGE_") or n.startswith("PYTEST_")]:
        del env[name]
    return env


def run_pytest(root: Path, env: dict[str, str], *args: str) -> Run:
    (root / "calls.txt").unlink(missing_ok=True)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *args]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 5):
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    calls_file = root / "calls.txt"
    calls = int(calls_file.read_text()) if calls_file.exists() else 0
    return Run(seconds, calls, done.stdout)


def run_evaluate(root: Path, env: dict[str, str], concurrency: int) -> Run:
    script = root / "evaluate_bench.py"
    script.write_text(EVALUATE)
    command = [
        sys.executable,
        str(script),
        str(root / "cases.jsonl"),
        str(root / "evaluators" / "negation_prompt.md"),
        str(concurrency),
    ]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"Dataset.evaluate failed:\n{done.stderr[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return Run(float(result["seconds"]), int(result["calls"]), done.stdout)


def startup_added(root: Path, env: dict[str, str], repeats: int) -> tuple[float, float]:
    """Median wall seconds of a benchmark-free pytest run without and with the plugin."""
    project = root / "plain"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    env = dict(env, PYTHONPATH="")
    without: list[float] = []
    with_plugin: list[float] = []
    for _ in range(repeats):
        without.append(run_pytest(project, env, "-p", "no:llmjudge").seconds)
        with_plugin.append(run_pytest(project, env).seconds)
    return statistics.median(without), statistics.median(with_plugin)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=1000, help="N, cases to judge (default 1000)")
    parser.add_argument(
        "--latency", type=float, default=0.25, help="L, seconds each judge call sleeps (default 0.25)"
    )
    parser.add_argument("--concurrency", type=int, default=32, help="C, judge calls in flight (default 32)")
    parser.add_argument("--per-file", type=int, default=50, help="cases per benchmark file (default 50)")
    parser.add_argument("--startup-repeats", type=int, default=15, help="runs per side for (d) (default 15)")
    args = parser.parse_args()

    floor = math.ceil(args.cases / args.concurrency) * args.latency
    with tempfile.TemporaryDirectory(prefix="llmjudge-bench-") as tmp:
        root = Path(tmp)
        write_project(root, args.cases, args.per_file)
        env = environment(root, args.latency)
        pytest_args = ["benchmarks", f"--llmjudge-concurrency={args.concurrency}", "-p", "no:syrupy"]
        cold = run_pytest(root, env, *pytest_args)
        evaluate = run_evaluate(root, env, args.concurrency)
        cached = run_pytest(root, env, *pytest_args)
        without, with_plugin = startup_added(root, env, args.startup_repeats)

    added_ms = (with_plugin - without) * 1000
    rows = [
        ("floor ceil(N/C)*L", floor, "1.00 x floor", ""),
        (
            "(a) pytest + llmjudge, cold",
            cold.seconds,
            f"{cold.seconds / floor:.2f} x floor",
            f"{cold.calls} calls",
        ),
        (
            "(b) Dataset.evaluate + LLMJudge",
            evaluate.seconds,
            f"{evaluate.seconds / floor:.2f} x floor",
            f"{evaluate.calls} calls",
        ),
        (
            "(c) pytest + llmjudge, cached",
            cached.seconds,
            f"{cached.seconds / floor:.2f} x floor",
            f"{cached.calls} calls",
        ),
        ("(d) pytest, no benchmarks, -p no:llmjudge", without, "", "median"),
        ("(d) pytest, no benchmarks, plugin on", with_plugin, f"+{added_ms:.0f} ms", "median"),
    ]
    print(
        f"N={args.cases} cases, L={args.latency:g} s, C={args.concurrency}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}"
    )
    print(textwrap.dedent(""))
    print(f"{'measurement':<44}{'seconds':>9}  {'ratio':<16}{'note'}")
    for name, seconds, ratio, note in rows:
        print(f"{name:<44}{seconds:>9.2f}  {ratio:<16}{note}")
    print()
    print(
        f"(a)/(b) = {cold.seconds / evaluate.seconds:.2f}   (a) targets <= {1.2 * floor:.2f} s and < (b); (c) <= 3 s with 0 calls; (d) <= 30 ms"
    )


if __name__ == "__main__":
    main()
