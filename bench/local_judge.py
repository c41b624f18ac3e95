"""The local judge on this machine: model preparation, server start, verdict latency and tokens/s.

Measures, with the packaged Gemma 3 270M GGUF and ``pytest_llmjudge.local.server``:

(a) model preparation: assembling the GGUF into an empty cache folder, then a second call that
    finds it there;
(b) server start for 1 and 2 parallel slots: from ``start_local_server`` until ``/health`` answers;
(c) per-verdict latency (median, p95) and tokens/s at 1 and 2 slots: every case of the example
    benchmarks, compiled as the plugin compiles it, judged like ``LLMJudge`` judges it (its agent,
    system prompt and ``<Input>/<Output>/<ExpectedOutput>/<Rubric>`` prompt, the prompt file's
    SYSTEM section as instructions) through pydantic-ai's OpenAI provider, with the server's
    JSON-schema output enforcing ``{reason, pass}``; as many requests in flight as slots.

Tokens/s are client-side: prompt and generated tokens reported by the server, over the wall time
of the whole batch. Each slot setting gets a fresh server, so prompt caches start empty.

    python bench/local_judge.py [--slots 1 2] [--rounds 1] [--max-tokens 256]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field
from pydantic_ai import capture_run_messages
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_evals.evaluators.llm_as_a_judge import (
    _build_prompt,
    _judge_input_output_agent,
    _judge_input_output_expected_agent,
)

from pytest_llmjudge.compile.request import CompiledRequest, compile_case, sections_from_fields
from pytest_llmjudge.local.server import (
    available_cores,
    prepare_packaged_model,
    start_local_server,
)
from pytest_llmjudge.models.models import openai_compatible_model
from pytest_llmjudge.suite.files import load_benchmark
from pytest_llmjudge.suite.prompt_file import parse_prompt

ROOT = Path(__file__).resolve().parent.parent


class BenchVerdict(BaseModel):
    """The verdict object the server's JSON schema enforces."""

    reason: str = Field(description="A concise 1-2 sentence justification for the verdict.")
    pass_: bool = Field(validation_alias="pass", serialization_alias="pass")


@dataclass(frozen=True)
class Call:
    seconds: float
    input_tokens: int
    output_tokens: int
    valid: bool


def example_requests() -> list[CompiledRequest]:
    """Every case of the repository's example benchmarks, compiled as the plugin compiles it."""
    requests = []
    for path in sorted((ROOT / "benchmarks").rglob("*.yaml")):
        benchmark = load_benchmark(path, str(path.relative_to(ROOT)), ROOT)
        if benchmark.prompt_path is not None:
            sections = parse_prompt(benchmark.prompt_path.read_text(), str(benchmark.prompt_path))
        else:
            sections = sections_from_fields(benchmark)
        requests += [compile_case(benchmark, sections, case) for case in benchmark.cases]
    return requests


async def judge(request: CompiledRequest, model: Model, settings: ModelSettings) -> Call:
    prompt, _ = _build_prompt(
        inputs=request.inputs,
        output=request.output,
        expected_output=request.expected_output,
        rubric=request.rubric,
    )
    agent = _judge_input_output_expected_agent if request.expected_output else _judge_input_output_agent
    start = time.perf_counter()
    valid = True
    with capture_run_messages() as messages:
        try:
            await agent.run(
                prompt,
                model=model,
                model_settings=settings,
                output_type=BenchVerdict,
                instructions=request.instructions or None,
            )
        except Exception:  # an invalid verdict after retries still took its time and tokens
            valid = False
    seconds = time.perf_counter() - start
    responses = [message for message in messages if isinstance(message, ModelResponse)]
    return Call(
        seconds,
        sum(response.usage.input_tokens for response in responses),
        sum(response.usage.output_tokens for response in responses),
        valid,
    )


async def judge_all(
    requests: list[CompiledRequest], model: Model, settings: ModelSettings, in_flight: int
) -> list[Call]:
    gate = asyncio.Semaphore(in_flight)

    async def one(request: CompiledRequest) -> Call:
        async with gate:
            return await judge(request, model, settings)

    return list(await asyncio.gather(*(one(request) for request in requests)))


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def bench_slots(model_path: Path, slots: int, requests: list[CompiledRequest], max_tokens: int) -> None:
    start = time.perf_counter()
    server = start_local_server(f"local:{model_path}", parallel=slots, cache_dir=model_path.parent)
    started = time.perf_counter() - start
    try:
        model = openai_compatible_model(server.url, server.model_name)
        settings = ModelSettings(temperature=0.0, max_tokens=max_tokens)
        wall_start = time.perf_counter()
        calls = asyncio.run(judge_all(requests, model, settings, slots))
        wall = time.perf_counter() - wall_start
    finally:
        server.stop()
    latencies = [call.seconds for call in calls]
    generated = sum(call.output_tokens for call in calls)
    prompted = sum(call.input_tokens for call in calls)
    valid = sum(call.valid for call in calls)
    print(f"{slots} slot(s): server start {started:.2f} s")
    print(f"  {len(calls)} verdicts, {valid} valid, in {wall:.1f} s ({len(calls) / wall:.2f} verdicts/s)")
    print(f"  latency per verdict: median {statistics.median(latencies):.2f} s, p95 {p95(latencies):.2f} s")
    print(
        f"  tokens/s: {generated / wall:.1f} generated, {prompted / wall:.0f} prompt (incl. cached prefixes)"
    )
    if hasattr(os, "getloadavg"):  # other work on the machine shows here, and slows every figure
        print(f"  1-minute load average at the end: {os.getloadavg()[0]:.2f} on {available_cores()} cores")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--slots", type=int, nargs="+", default=[1, 2], help="parallel slots to measure")
    parser.add_argument("--rounds", type=int, default=1, help="times each example case is judged")
    parser.add_argument("--max-tokens", type=int, default=256, help="cap on each verdict's tokens")
    args = parser.parse_args()

    requests = example_requests() * args.rounds
    print(f"{len(requests)} judge requests from {ROOT / 'benchmarks'}; {available_cores()} cores")
    cache = Path(tempfile.mkdtemp(prefix="llmjudge-bench-"))
    try:
        start = time.perf_counter()
        model_path = prepare_packaged_model(cache)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        prepare_packaged_model(cache)
        warm = time.perf_counter() - start
        size = model_path.stat().st_size / 2**20
        print(f"model preparation: {cold:.2f} s assembling {size:.0f} MiB, {warm * 1000:.1f} ms when cached")
        for slots in args.slots:
            bench_slots(model_path, slots, requests, args.max_tokens)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
