"""Unit tests of grader/engine/plots.py (no database, no sandbox).

The student's side is faked with trusted in-process functions (tests/explorables/
sample_plots.py); no student source is ever executed.
"""

from __future__ import annotations

import ast
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from grader.engine import plots
from grader.engine.executors.base import Call, CallResult
from grader.engine.kinds import attention, multi_head
from tests.explorables.sample_plots import STUDENTS, run_student, sample_plots

KINDS = ("attention", "multi-head-attention", "softmax")


def test_module_is_pure() -> None:
    """No Django: the module must import in the worker and in plain scripts alike."""
    tree = ast.parse(Path(plots.__file__).read_text())
    imported = {
        (n.module or "") if isinstance(n, ast.ImportFrom) else a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    assert not any(m.startswith("django") for m in imported), imported


@pytest.mark.parametrize("kind", KINDS)
def test_plot_calls_are_fixed_and_hidden_free(kind: str) -> None:
    first, second = plots.plot_calls(kind), plots.plot_calls(kind)
    assert first and all(isinstance(c, Call) for c in first)
    assert len(first) == len(second)
    for a, b in zip(first, second, strict=True):
        for x, y in zip(a.args, b.args, strict=True):
            if isinstance(x, np.ndarray):
                np.testing.assert_array_equal(x, y)
    total_bytes = sum(a.nbytes for c in first for a in c.args if isinstance(a, np.ndarray))
    assert total_bytes < 20_000_000  # small enough to cross the sandbox boundary quickly


def test_unknown_kind() -> None:
    assert plots.plot_calls("nope") == []
    assert plots.plots_from_results("nope", []) == {}


def test_attention_calls_use_identity_values() -> None:
    calls = plots.plot_calls("attention")
    Q, _, V = calls[0].args
    assert Q.shape == (attention.EXAMPLE_QUERIES, attention.EXAMPLE_DK)
    np.testing.assert_array_equal(V, np.eye(attention.EXAMPLE_KEYS))
    assert [c.args[0].shape[-1] for c in calls[1:]] == list(attention.SWEEP_DK)
    for c in calls[1:]:
        np.testing.assert_array_equal(c.args[2], np.eye(attention.SWEEP_KEYS))


@pytest.mark.parametrize(
    ("kind", "code"), [(kind, code) for kind, codes in STUDENTS.items() for code in codes]
)
def test_dict_is_strict_json(kind: str, code: str) -> None:
    data = sample_plots(kind, code)
    text = json.dumps(data, allow_nan=False)  # NaN/inf must have become None
    assert json.loads(text) == data
    assert data["version"] == 1 and data["kind"] == kind
    assert len(text) < 20_000


@pytest.mark.parametrize("kind", KINDS)
def test_correct_function_matches_reference(kind: str) -> None:
    data = sample_plots(kind, "correct")
    ex = data["example"]
    assert ex["student"] == ex["reference"]
    assert ex["max_abs_diff"] == 0.0
    assert ex["error"] is None
    assert all(abs(s - 1) < 1e-3 for s in ex["reference_row_sums"])
    if data["saturation"]:
        assert data["saturation"]["student"] == data["saturation"]["reference"]
    assert data["diagnosis"] == []


def test_reference_saturation_curve_is_flat_and_unscaled_climbs() -> None:
    ref = sample_plots("attention", "correct")["saturation"]
    assert ref["d_k"] == [4, 8, 16, 32, 64, 128, 256, 512]
    curve = ref["reference"]
    assert max(curve) - min(curve) < 0.08, curve  # flat: ÷√d_k keeps the spread
    assert all(0.15 < v < 0.4 for v in curve)

    unscaled = sample_plots("attention", "missing-scale")["saturation"]["student"]
    assert all(b > a for a, b in itertools.pairwise(unscaled)), unscaled
    assert unscaled[-1] > 0.9  # climbs toward 1: one key takes everything
    assert unscaled[0] < 0.6


def test_scale_by_d_is_near_uniform() -> None:
    data = sample_plots("attention", "scale-by-d")
    sat = data["saturation"]
    assert sat["student"][-1] < 1.5 * sat["uniform"]
    row = sat["row"]
    assert max(row["student"]) - min(row["student"]) < 0.05  # every key about 1/16
    assert data["pictures"]["scale-by-d"]["picture"] == "row"
    assert data["misconception"] == "scale-by-d"


def test_hardcoded_scale_crosses_reference_at_64() -> None:
    sat = sample_plots("attention", "hardcoded-scale")["saturation"]
    i = sat["d_k"].index(64)
    assert sat["student"][i] == sat["reference"][i]  # ÷8 is right for d_k = 64 only
    assert sat["student"][0] < sat["reference"][0]
    assert sat["student"][-1] > sat["reference"][-1]


def test_scale_after_softmax_rows_do_not_sum_to_one() -> None:
    ex = sample_plots("attention", "scale-after-softmax")["example"]
    assert all(abs(s - 0.25) < 1e-3 for s in ex["student_row_sums"])  # 1/√16


def test_multi_head_recovers_each_heads_weights() -> None:
    data = sample_plots("multi-head-attention", "correct")
    assert len(data["example"]["student"]) == multi_head.MH_EXAMPLE_TOKENS
    assert all(abs(s - 1) < 1e-3 for s in data["example"]["student_row_sums"])
    wide = sample_plots("multi-head-attention", "scale-by-model-width")["saturation"]
    assert all(s < r for s, r in zip(wide["student"], wide["reference"], strict=True))
    unscaled = sample_plots("multi-head-attention", "missing-scale")["saturation"]
    assert unscaled["student"][-1] > 0.85


def test_unstable_softmax_shows_nan_as_none() -> None:
    data = sample_plots("softmax", "unstable-softmax")
    assert data["saturation"] is None
    flat = [v for row in data["stability"]["student"] for v in row]
    assert None in flat
    assert data["pictures"]["unstable-softmax"]["picture"] == "stability"


def test_errors_and_truncated_runs_are_explained() -> None:
    data = sample_plots("attention", "error")
    assert data["example"]["student"] is None
    assert "ValueError" in data["example"]["error"]
    assert all(v is None for v in data["saturation"]["student"])

    # A limit ended the run after the example: the curve says so, the example still shows.
    results = run_student("attention", STUDENTS["attention"]["correct"])[:1]
    data = plots.plots_from_results("attention", results)
    assert data["example"]["student"] is not None
    assert data["saturation"]["error"] and "did not get to" in data["saturation"]["error"]

    wrong_shape = [CallResult(output=np.zeros((2, 2)))]
    data = plots.plots_from_results("attention", wrong_shape)
    assert "shape (2, 2)" in data["example"]["error"]


def test_pictures_for_misconceptions() -> None:
    assert plots.picture_for("missing-scale")["picture"] == "saturation"
    assert plots.picture_for("scale-by-model-width", "attention") is None
    assert plots.picture_for("scale-by-model-width", "multi-head-attention") is not None
    assert plots.picture_for("mask-ignored") is None
    data = sample_plots("softmax", "correct")
    assert set(data["pictures"]) == {
        "softmax-wrong-axis",
        "unnormalized-weights",
        "unstable-softmax",
    }
