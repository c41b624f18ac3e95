"""How parse time grows with hostile input size: each row should double as the input doubles.

Rows are inputs that once took quadratic time or crashed (a prompt bullet of spaces, unclosed
Markdown comments, a bullet of many continuation lines) and the depth checks that run before
YAML and JSON are parsed. Each time is the best of ``--repeat`` runs; "x per doubling" is the
time ratio per doubling of the input, from the growth between neighbouring sizes (2.0 is
linear, 4.0 quadratic).

    python bench/parse_scaling.py [--sizes 10000 20000 40000 80000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import itertools
import math
import platform
import time
from collections.abc import Callable

from pytest_llmjudge.compile.request import compile_rubric, without_comments
from pytest_llmjudge.lint.logic import normalize
from pytest_llmjudge.suite.errors import SpecError
from pytest_llmjudge.suite.nesting import json_too_deep
from pytest_llmjudge.suite.prompt_file import parse_prompt
from pytest_llmjudge.suite.yamlsrc import load_yaml

HEAD = "SYSTEM: You judge.\n\nRUBRIC\n\nAutomatic fail if any of the following are true:\n"


def spaces_in_a_bullet(n: int) -> Callable[[], object]:
    text = HEAD + f"- a{' ' * n}b\n- Automatic fail{' ' * n}:x\n"
    return lambda: parse_prompt(text, "p.md")


def unclosed_comments(n: int) -> Callable[[], object]:
    text = HEAD + "- " + "<!--" * (n // 4) + "\n"
    return lambda: compile_rubric(parse_prompt(text, "p.md"), "X")


def continuation_lines(n: int) -> Callable[[], object]:
    text = HEAD + "- start\n" + "  more\n" * (n // 7)
    return lambda: parse_prompt(text, "p.md")


def comments_between_spaces(n: int) -> Callable[[], object]:
    text = (" " * 9 + "<!-- x -->") * (n // 19)
    return lambda: without_comments(text)


def lint_unclosed_comments(n: int) -> Callable[[], object]:
    text = "<!--" * (n // 4)
    return lambda: normalize(text)


def yaml_nesting(n: int) -> Callable[[], object]:
    text = "code: X\nnotes: " + "[" * (n // 2) + "]" * (n // 2) + "\n"

    def run() -> object:
        try:
            return load_yaml(text, "x.yaml")
        except SpecError as error:  # refused at level 101, before composing
            return error

    return run


def yaml_strings_of_brackets(n: int) -> Callable[[], object]:
    text = "code: X\ncases:\n" + "  - {id: a, candidate_output: '[[[[ ]]'}\n" * (n // 40)
    return lambda: load_yaml(text, "x.yaml")  # past the cheap bound: the exact depth pass runs


def jsonl_brackets_in_strings(n: int) -> Callable[[], object]:
    line = '{"id": "a", "candidate_output": "' + "[" * n + '"}'
    return lambda: json_too_deep(line)


ROWS = [
    ("prompt bullet of N spaces", spaces_in_a_bullet),
    ("prompt bullet of N/4 unclosed <!--", unclosed_comments),
    ("prompt bullet of N/7 continuation lines", continuation_lines),
    ("without_comments, comments between spaces", comments_between_spaces),
    ("linter's bullet text, N/4 unclosed <!--", lint_unclosed_comments),
    ("YAML, N/2 nested [ (refused)", yaml_nesting),
    ("YAML, N/40 cases with [ in strings", yaml_strings_of_brackets),
    ("JSONL line, N [ inside a string", jsonl_brackets_in_strings),
]


def best_of(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 20_000, 40_000, 80_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes: list[int] = args.sizes
    print(
        f"input sizes N = {', '.join(f'{n:,}' for n in sizes)} characters; best of {args.repeat}; "
        f"Python {platform.python_version()}\n"
    )
    width = max(len(name) for name, _ in ROWS)
    print(f"{'input':<{width}}  " + "  ".join(f"{n:>9,}" for n in sizes) + "  x per doubling")
    for name, make in ROWS:
        times = [best_of(make(n), args.repeat) for n in sizes]
        points = list(zip(sizes, times, strict=True))
        exponents = [
            math.log(tb / ta) / math.log(nb / na)
            for (na, ta), (nb, tb) in itertools.pairwise(points)
            if ta > 0 < tb
        ]
        doubling = 2 ** (sum(exponents) / len(exponents)) if exponents else float("nan")
        cells = "  ".join(f"{t * 1000:>7.2f}ms" for t in times)
        print(f"{name:<{width}}  {cells}  {doubling:>5.2f}")


if __name__ == "__main__":
    main()
