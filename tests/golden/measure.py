"""How much of the golden corpus the diagnosis names, from `manage.py grade ... --json` lines.

    for slug in scaled-dot-product-attention multi-head-attention stable-softmax; do
      .venv/bin/python manage.py grade $slug tests/golden/$slug/*.py --json
    done | .venv/bin/python tests/golden/measure.py

Reads the verdict lines on stdin and ``expected.json`` (a file's misconceptions are its
``present`` list, or its expected ``diagnosis`` without one). Prints: single-defect files with
exactly their code named, the share of all misconceptions present that are named, codes named
on correct files (must be 0) and, per code, what is still missed. Not a test: the golden test
checks the exact expectations; this summarises them against what the grader prints now.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

EXPECTED = json.loads((Path(__file__).resolve().parent / "expected.json").read_text())
# One function, two names (softmax(S)V/c == (softmax(S)/c)V): counted as one misconception.
SAME = {"scale-after-softmax": "scale-values"}


def _codes(codes: list[str]) -> set[str]:
    return {SAME.get(c, c) for c in codes}


def main() -> None:
    single = single_exact = present_total = present_named = correct = on_correct = 0
    missed: Counter[str] = Counter()
    for line in sys.stdin:
        verdict = json.loads(line)
        slug, name = Path(verdict["file"]).parent.name, Path(verdict["file"]).name
        expected = EXPECTED[slug][name]
        present = _codes(expected.get("present", expected["diagnosis"]))
        named = _codes(verdict["diagnosis"])
        if expected["status"] == "passed":
            correct += 1
            on_correct += len(named)
            continue
        if len(present) == 1:
            single += 1
            single_exact += named == present
        present_total += len(present)
        present_named += len(present & named)
        for code in present - named:
            missed[f"{code} ({slug}/{name})"] += 1
    share = present_named / present_total if present_total else 1.0
    print(f"single-defect files with exactly their code named: {single_exact}/{single}")
    print(f"misconceptions present that are named: {present_named}/{present_total} ({share:.0%})")
    print(f"codes named on correct files: {on_correct} (over {correct} correct files)")
    for item in sorted(missed):
        print(f"missed: {item}")


if __name__ == "__main__":
    main()
