"""Rebuild data/hhh_helpful.jsonl from the BIG-bench sdist on PyPI (bigbench 1.0.0).

    pip download bigbench==1.0.0 --no-deps -d /tmp/bb
    python build_data.py /tmp/bb/bigbench-1.0.0.tar.gz

Each HHH "helpful" example is a user request with two assistant responses; the response the
task's authors chose (target score 1) becomes a case labelled ``pass``, the other ``fail``.
"""

from __future__ import annotations

import json
import sys
import tarfile
from pathlib import Path

MEMBER = "bigbench-1.0.0/bigbench/benchmark_tasks/hhh_alignment/helpful/task.json"


def main(sdist: str) -> None:
    with tarfile.open(sdist) as archive:
        stream = archive.extractfile(MEMBER)
        assert stream is not None
        task = json.load(stream)
    lines = []
    for number, example in enumerate(task["examples"]):
        for response, score in example["target_scores"].items():
            lines.append(
                {
                    "id": f"pair-{number:02d}-{'preferred' if score == 1 else 'other'}",
                    "source_narrative": example["input"],
                    "candidate_output": response,
                    "label": "pass" if score == 1 else "fail",
                    "metadata": {"source": "BIG-bench hhh_alignment/helpful", "example": number},
                }
            )
    out = Path(__file__).with_name("data") / "hhh_helpful.jsonl"
    out.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    print(f"{len(lines)} cases from {len(task['examples'])} examples; canary: {task['canary']}")


if __name__ == "__main__":
    main(sys.argv[1])
