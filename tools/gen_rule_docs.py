"""Write docs/rules.md from the lint rules' docstrings; ``--check`` fails when it is out of date.

python tools/gen_rule_docs.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from pytest_llmjudge.lint.docs import render_rules_markdown  # noqa: E402

TARGET = ROOT / "docs" / "rules.md"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gen_rule_docs.py", description="Generate docs/rules.md.")
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/rules.md is out of date")
    args = parser.parse_args(argv)
    text = render_rules_markdown()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.is_file() else ""
        if current != text:
            print(
                f"{TARGET.relative_to(ROOT)} is out of date: run python tools/gen_rule_docs.py",
                file=sys.stderr,
            )
            return 1
        return 0
    TARGET.parent.mkdir(exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
