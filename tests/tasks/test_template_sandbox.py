"""A task's prompt template is data, not code: it renders in a bounded sandbox.

A template that names a private attribute (the way out of jinja2 to the interpreter) is a
collection error at its line under pytest, ``llmjudge compile`` and ``llmjudge estimate``; one
that reaches one at render time, loops without end or builds a huge value is its case's task
ERROR, quickly."""

from __future__ import annotations

import contextlib
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Suite

BENCHMARK = """\
code: M1
concept: The answer names the narrative.
inclusion_criteria: Apply when there is output. Flag if it is wrong.
threshold: 0.5
task:
  model: openai:release-1
  base_url: http://127.0.0.1:9/v1
  prompt_file: prompts/extract.yaml
cases:
  - {id: asked, source_narrative: "Pt given heparin"}
"""

# The hostile line is the template's second line; the template starts on the file's line 5.
PROMPT = """\
messages:
  - role: system
    content: You extract medications.
  - role: user
    content: |
      Narrative: {{ source_narrative }}
      HOSTILE
"""

RUN_SHELL = "{{ cycler.__init__.__globals__.os.popen('touch pwned').read() }}"
READ_KEY = "{{ lipsum.__globals__['os'].environ['LLMJUDGE_PROBE_KEY'] }}"
VIA_FILTER = "{{ (cycler|attr('__init__')|attr('__globals__')).os.popen('touch pwned').read() }}"
SECRET = "sk-probe-0123456789abcdef"


def write_suite(suite: Suite, hostile: str) -> None:
    suite.write("prompts/extract.yaml", PROMPT.replace("HOSTILE", hostile))
    suite.benchmark("M1", BENCHMARK)


def command(suite: Suite, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``llmjudge ARGS`` in the suite, in a process that may use at most 4 GiB of memory."""

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    return subprocess.run(
        [sys.executable, "-m", "pytest_llmjudge.cli.main", *args],
        cwd=suite.root,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        preexec_fn=limit_memory,
    )


@pytest.mark.parametrize("hostile", [RUN_SHELL, READ_KEY, VIA_FILTER], ids=["shell", "key", "attr-filter"])
@pytest.mark.parametrize("options", [(), ("--llmjudge-cache=replay",)], ids=["run", "replay"])
def test_a_template_naming_a_private_attribute_is_a_collection_error_at_its_line(
    suite: Suite, monkeypatch: pytest.MonkeyPatch, hostile: str, options: tuple[str, ...]
) -> None:
    monkeypatch.setenv("LLMJUDGE_PROBE_KEY", SECRET)
    write_suite(suite, hostile)
    result = suite.run("benchmarks", "--llmjudge-results=r.json", *options)
    result.assert_outcomes(errors=1)  # the collection error; nothing ran
    result.stdout.fnmatch_lines(
        [
            "*prompts/extract.yaml:5:*messages?1?.content: the template reads the private attribute "
            "'__*' (template line 2), which a sandboxed template may not*"
        ]
    )
    assert not (suite.root / "pwned").exists()
    assert SECRET not in result.stdout.str()
    results = suite.root / "r.json"
    assert not results.exists() or SECRET not in results.read_text()


def test_llmjudge_compile_refuses_the_template_and_runs_nothing(suite: Suite) -> None:
    write_suite(suite, RUN_SHELL)
    compiled = command(suite, "compile", "benchmarks/a/M1.yaml")
    assert compiled.returncode == 2, compiled.stdout
    assert "prompts/extract.yaml:5:" in compiled.stderr
    assert "private attribute '__globals__' (template line 2)" in compiled.stderr
    assert "Traceback" not in compiled.stderr
    assert not (suite.root / "pwned").exists()


def test_llmjudge_estimate_refuses_the_template_and_runs_nothing(suite: Suite) -> None:
    write_suite(suite, RUN_SHELL)
    estimated = command(suite, "estimate", "benchmarks")
    assert estimated.returncode != 0
    assert "prompts/extract.yaml:5:" in estimated.stdout + estimated.stderr
    assert "private attribute" in estimated.stdout + estimated.stderr
    assert not (suite.root / "pwned").exists()


def test_llmjudge_compile_shows_a_template_that_would_not_end_stopped_at_its_limit(suite: Suite) -> None:
    write_suite(suite, "{% for i in range(10**9) %}x{% endfor %}")
    compiled = command(suite, "compile", "benchmarks/a/M1.yaml", timeout=60)
    assert compiled.returncode == 0, compiled.stderr
    assert "cannot render: user message (line 5): range of 1,000,000,000 numbers" in compiled.stdout


@pytest.mark.parametrize(
    ("hostile", "message"),
    [
        ("{% for i in range(10**9) %}x{% endfor %}", "range of 1,000,000,000 numbers"),
        (
            "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
            "more than 200,000 loop iterations and calls",
        ),
        (
            "{% set s = source_narrative * 1000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}",
            "more than 200,000 loop iterations and calls",
        ),
        (
            "{% macro f(n) %}{% if n %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(60) }}",
            "more than 200,000 loop iterations and calls",
        ),
        ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "a macro or loop recursed too deeply"),
        (
            "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
            "{% endfor %}{{ ns.s }}",
            "a value of 4,194,308 characters (the limit is 4,000,000)",
        ),
        (
            "{% set ns = namespace(n=3) %}{% for i in range(60) %}{% set ns.n = ns.n * ns.n %}"
            "{% endfor %}{{ ns.n > 0 }}",
            "a number of about 15,635 digits (the limit is 10,000)",
        ),
        ("{{ source_narrative * 10**12 }}", "a value of 16,000,000,000,000 characters"),
        ("{{ source_narrative|center(10**12) }}", "a value of 1,000,000,000,000 characters"),
        ("{{ source_narrative.ljust(10**12) }}", "a value of 1,000,000,000,000 characters"),
        ("{{ [source_narrative * 100000] * 100000 }}", "a value of "),
        ("{{ '%10000000000d' % 1 }}", "a format field wider than 4,000,000 characters"),
        ("{{ '{:>10000000000}'.format(1) }}", "a format field wider than 4,000,000 characters"),
        ("{{ lipsum(10**9) }}", "a value of "),
        (
            "{{ source_narrative * 200000 }}{{ source_narrative * 200000 }}",
            "the rendered text is over 4,000,000 characters",
        ),
    ],
    ids=[
        "range", "nested-loops", "string-loops", "macro-bomb", "recursion", "doubling", "squaring", "repeat",
        "center", "ljust", "list-repeat", "percent-width", "format-width", "lipsum", "output-size",
    ],
)  # fmt: skip
def test_a_template_that_would_not_end_stops_at_its_limit(tmp_path: Path, hostile: str, message: str) -> None:
    from pytest_llmjudge.tasks.prompt_template import (
        TemplateRenderError,
        load_prompt_template,
        render_messages,
    )

    path = tmp_path / "extract.yaml"
    path.write_text(PROMPT.replace("HOSTILE", hostile), encoding="utf-8")
    template = load_prompt_template(path, "extract.yaml")
    with within_seconds(20), pytest.raises(TemplateRenderError) as caught:
        render_messages(template, {"source_narrative": "Pt given heparin"})
    assert str(caught.value).startswith(f"user message (line 5): {message}")


@contextlib.contextmanager
def within_seconds(seconds: int) -> Iterator[None]:
    """Fail, rather than hang, when the block takes longer than ``seconds``."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_an_unsafe_attribute_reached_at_render_time_is_the_cases_task_error(suite: Suite) -> None:
    write_suite(suite, "{{ inputs['_' ~ '_class__'] }}")
    result = suite.run("benchmarks", "-rE")
    result.assert_outcomes(passed=1, errors=1)  # the prompt item, and the case
    result.stdout.fnmatch_lines(
        ["*task ERROR (task-request)*access to attribute '__class__' of 'dict' object is unsafe*"]
    )


def test_a_limit_in_a_run_is_the_cases_task_error_and_the_run_ends(suite: Suite) -> None:
    write_suite(suite, "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}")
    with within_seconds(60):
        result = suite.run("benchmarks", "-rE", "-k", "asked")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*task ERROR (task-request)*more than 200,000 loop iterations*"])


def test_ordinary_templates_still_render(tmp_path: Path) -> None:
    from pytest_llmjudge.tasks.prompt_template import load_prompt_template, render_messages

    path = tmp_path / "t.yaml"
    path.write_text(
        "prompt:\n  template: >-\n"
        "    {% set ns = namespace(n=0) %}{% for e in examples %}{% set ns.n = ns.n + 1 %}"
        "{{ loop.index }}/{{ loop.length }} {{ e.id }} {% endfor %}{{ ns.n }}"
        " {{ '{:,}'.format(population) }} {{ name|upper ~ '!' }} {{ range(3)|join(',') }}\n",
        encoding="utf-8",
    )
    template = load_prompt_template(path, "t.yaml")
    fields = {"examples": [{"id": "a"}, {"id": "b"}], "population": 8_000_000_000, "name": "ada"}
    (message,) = render_messages(template, fields)
    assert message.content == "1/2 a 2/2 b 2 8,000,000,000 ADA! 0,1,2"
