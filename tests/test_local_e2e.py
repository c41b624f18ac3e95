"""End to end with the real offline judge: the example suite, judged, cached, cleaned up."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import socket
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        importlib.util.find_spec("xllamacpp") is None,
        reason="needs the local extra: pip install -e '.[local]'",
    ),
]


def local_server_pids(cwd: Path) -> set[int]:
    """Live local-judge servers started from ``cwd`` (not those of tests running beside this one)."""
    pids = set()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            started_in = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if b"pytest_llmjudge.local.child" in cmdline and state != "Z" and started_in == cwd:
            pids.add(int(entry.name))
    return pids


def refuses(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) != 0


def test_example_suite_with_the_local_judge(pytester: pytest.Pytester) -> None:
    for folder in ("benchmarks", "rubrics", "evaluators", "data"):
        shutil.copytree(REPO / folder, pytester.path / folder)
    args = ("benchmarks", "--llmjudge-model", "local", "-p", "no:cacheprovider", "--junitxml=first.xml")
    first = pytester.runpytest_subprocess(*args, timeout=540)
    out = first.stdout.str()
    # Every judged case got a valid verdict: no ERROR items, a pass/fail verdict with a reason.
    assert "error" not in first.parseoutcomes()
    cases = [c for c in ET.parse(pytester.path / "first.xml").getroot().iter("testcase")]
    judged = {
        c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")}
        for c in cases
        if any(p.get("value", "").startswith("local:") for p in c.iter("property"))
    }
    assert len(judged) == 8  # A-MED1 3, A-NEG1 3 (hybrid, checks pass), A-VIT1 2
    for props in judged.values():
        assert props["llmjudge_verdict"] in {"pass", "fail"}
        assert props["llmjudge_reason"].strip()
    assert re.search(r"judge: \d+ verdict\(s\), ([89]|1\d) model call\(s\), 0 cache hit\(s\)", out)
    port = int(re.search(r"served at http://127\.0\.0\.1:(\d+)", out).group(1))
    # Nothing is left behind: no server process, the port is closed.
    assert not local_server_pids(pytester.path)
    assert refuses(port)

    second = pytester.runpytest_subprocess(*args[:-1], "--junitxml=second.xml", timeout=300)
    assert re.search(r"0 model call\(s\), 8 cache hit\(s\)", second.stdout.str())
    assert second.parseoutcomes() == first.parseoutcomes()
    assert not local_server_pids(pytester.path)
