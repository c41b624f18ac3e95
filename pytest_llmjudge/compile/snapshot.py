"""What a benchmark's snapshot holds: what its judge requests tell the judge (``judge_told``).

Every case of a benchmark is sent the same instructions, system prompt, rubric and output
schema; only the case data in the user prompt (``<Input>``, ``<Output>``, ``<ExpectedOutput>``)
differs. The snapshot keeps the request once, under ``(every case)``, with a ``<<case data>>``
line where each case's data goes, and no case data: the snapshot catches unintended changes to
what the judge is told, and a release that regenerates candidate outputs does not fail it. A
case whose request differs outside its data is kept under its id. ``factor`` (the request with
each case's data, which gives back the exact messages) serves previews.
"""

from __future__ import annotations

import difflib
import re

SHARED = "(every case)"
CASE_DATA = "<<case data>>"
_USER_PROMPT = "=== user-prompt ==="
_RUBRIC = "<Rubric>"  # LLMJudge's tag after the case data; data is fenced, so it cannot hold one


def split_request(text: str) -> tuple[str, str] | None:
    """``text`` (a rendered request) as (request with the case-data line, case data), or None."""
    lines = text.split("\n")
    try:
        start = lines.index(_USER_PROMPT) + 1
        end = lines.index(_RUBRIC, start)
    except ValueError:
        return None
    shared = "\n".join([*lines[:start], CASE_DATA, *lines[end:]])
    return shared, "\n".join(lines[start:end]) + "\n"


def join_request(shared: str, data: str) -> str:
    """The rendered request of a case: ``data`` in place of the shared request's case-data line."""
    before, _, after = shared.partition(f"\n{CASE_DATA}\n")
    return f"{before}\n{data}{after}"


def factor(requests: dict[str, str]) -> dict[str, str]:
    """``{case id: rendered request}`` as a snapshot: the first case's request once, then each
    case's data (or its whole request where it differs from the shared one)."""
    shared: str | None = None
    snapshot: dict[str, str] = {}
    for case_id, text in requests.items():
        parts = split_request(text)
        if parts is not None and shared is None:
            shared = parts[0]
        if parts is not None and parts[0] == shared and join_request(shared, parts[1]) == text:
            snapshot[case_id] = parts[1]
        else:
            snapshot[case_id] = text
    if shared is not None:
        snapshot[SHARED] = shared
    return snapshot


def judge_told(requests: dict[str, str]) -> dict[str, str]:
    """What a benchmark's snapshot holds: what the judge is told, without the case data.

    The shared request (instructions, system prompt, user prompt with a ``<<case data>>`` line,
    rubric, output schema) once under ``(every case)``; a case only where its request differs
    from the shared one outside its data (then that request, with its own ``<<case data>>``
    line), or whole where it has no case data to set apart. New candidate outputs, inputs or
    ground truths do not change the snapshot; a new instruction, rubric or prompt style does.
    """
    shared: str | None = None
    told: dict[str, str] = {}
    for case_id, text in requests.items():
        parts = split_request(text)
        if parts is None:
            told[case_id] = text
            continue
        if shared is None:
            shared = parts[0]
        if parts[0] != shared:
            told[case_id] = parts[0]
    if shared is not None:
        told[SHARED] = shared
    return told


_SNAPSHOT_KEY = re.compile(r"^  '(?P<key>[^']+)': ")  # a key of the amber text of a flat dict


def snapshot_diff(accepted: str, new: str) -> list[str]:
    """Every changed line between two serialized snapshots, under the case (or shared request) it is in.

    syrupy's own diff stops 100 lines after the first difference, which hides every case
    but the first when the case data of several changes.
    """
    old_lines, new_lines = accepted.splitlines(), new.splitlines()
    out: list[str] = []
    shown = None
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(1):
        key = _key_at(new_lines, group[0][3]) or _key_at(old_lines, group[0][1])
        if key != shown:
            out.append("  request of every case:" if key == SHARED else f"  case {key}:")
            shown = key
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [f"      {_text(line)}" for line in old_lines[i1:i2]]
                continue
            out += [f"    - {_text(line)}" for line in old_lines[i1:i2]]
            out += [f"    + {_text(line)}" for line in new_lines[j1:j2]]
        out.append("      ...")
    return out


def _text(line: str) -> str:
    """A line of a request as written, without the amber indentation of a dict value."""
    return line[4:] if line.startswith("    ") else line.strip()


def _key_at(lines: list[str], index: int) -> str | None:
    for line in reversed(lines[: index + 1]):
        found = _SNAPSHOT_KEY.match(line)
        if found:
            return found.group("key")
    return None


def ci_from_env(value: str | None) -> bool:
    """Whether the ``CI`` variable says the run is in CI: set to anything but empty, ``false`` or
    ``0`` (GitHub Actions, GitLab CI and most CI systems set ``CI=true``)."""
    text = (value or "").strip().lower()
    return bool(text) and text not in {"false", "0"}


def missing_in_ci(code: str, where: str) -> list[str]:
    """Why a benchmark without a snapshot fails in CI, and what to do about it."""
    return [
        f"no snapshot of the compiled judge requests of {code} in {where}: in CI (CI is set, or "
        "--llmjudge-ci) a missing snapshot is not recorded.",
        "Record it on your machine (a run outside CI records it, or use --snapshot-update) "
        f"and commit {where}.",
    ]
