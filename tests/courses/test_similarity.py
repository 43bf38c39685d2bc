"""The similarity of students' code: renamed copies are found, the starter code never counts,
and the figures are the same in every process (copydetect hashes with Python's salted hash)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from courses.similarity import similar_pairs

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "scaled-dot-product-attention"
STARTER = '''import numpy as np


def attention(Q, K, V, mask=None):
    """Return softmax(Q K^T / sqrt(d_k)) V, masking where mask is False."""
    raise NotImplementedError
'''


def test_a_copy_with_renamed_variables_is_found_with_its_copied_parts() -> None:
    original = (GOLDEN / "correct_matmul.py").read_text()
    renamed = original.replace("scores", "logits").replace("weights", "probs")
    other = (GOLDEN / "correct_einsum.py").read_text()
    pairs = similar_pairs(codes={"ann": original, "bob": renamed, "cat": other}, threshold=0.8)
    assert [(p.left, p.right) for p in pairs] == [("ann", "bob")]
    pair = pairs[0]
    assert pair.similarity == 1.0
    assert "".join(s.text for s in pair.segments_left) == original  # nothing lost or added
    assert any(s.copied for s in pair.segments_right)


def test_the_starter_code_is_boilerplate() -> None:
    # Two students who kept the starter code and added a line look alike only through it.
    codes = {"ann": STARTER + "x = 1\n", "bob": STARTER + "y = 2\n"}
    assert [p.similarity > 0.9 for p in similar_pairs(codes=codes, threshold=0.5)] == [True]
    assert similar_pairs(codes=codes, boilerplate=STARTER, threshold=0.0) == []
    # Two different solutions under the same starter header share less once it is left out.
    header = STARTER.replace("    raise NotImplementedError\n", "")
    a = header + "    return (GOLDEN / 'a')\n" + (GOLDEN / "correct_matmul.py").read_text()
    b = header + "    return (GOLDEN / 'b')\n" + (GOLDEN / "correct_einsum.py").read_text()
    plain = similar_pairs(codes={"a": a, "b": b}, threshold=0.0)[0].similarity
    without = similar_pairs(codes={"a": a, "b": b}, boilerplate=STARTER, threshold=0.0)
    assert not without or without[0].similarity < plain


SCRIPT = """
from pathlib import Path
from courses.similarity import similar_pairs
g = Path("tests/golden/scaled-dot-product-attention")
a, b = (g / "correct_matmul.py").read_text(), (g / "correct_einsum.py").read_text()
for p in similar_pairs(codes={"a": a, "b": b, "c": a + "# x\\n"}, threshold=0.0):
    print(p.left, p.right, p.similarity_left, p.similarity_right)
"""


def test_the_figures_are_the_same_whatever_the_hash_seed() -> None:
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        result = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1 and outputs.pop().count("\n") == 3
