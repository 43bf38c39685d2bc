"""Tests of grader/engine/validation.py: Validate grades every known wrong implementation."""

from __future__ import annotations

import pytest

from grader.engine import reference
from grader.engine.kinds import REFERENCE_SOURCES
from grader.engine.validation import validate_spec
from tests.grader.fakes import SourceLookupExecutor
from tests.grader.helpers import builtin_spec

# The implementations of a softmax written for matrices and of a mask that must have the
# scores' exact shape: Validate runs them, a check catches them and the diagnosis names them.
SHAPE_BOUND = {
    reference.KIND_SOFTMAX: {
        "softmax_tiled_rows": "batch-fixed-ndim",
        "softmax_columns_broadcast": "batch-fixed-ndim",
    },
    reference.KIND_ATTENTION: {"attention_mask_exact_shape": "mask-shape-exact"},
    reference.KIND_MULTI_HEAD: {"mha_mask_tiled_for_heads": "mask-shape-exact"},
}


@pytest.mark.parametrize("kind", sorted(SHAPE_BOUND))
def test_validate_catches_and_names_the_shape_bound_implementations(kind):
    report = validate_spec(
        spec=builtin_spec(kind),
        reference_source=REFERENCE_SOURCES[kind],
        executor=SourceLookupExecutor(),
    )
    assert report.reference_passed
    rows = {row.implementation: row for row in report.rows}
    for name, code in SHAPE_BOUND[kind].items():
        row = rows[name]
        assert row.code == code
        assert row.caught and row.named, row.verdict.to_dict()
        assert row.verdict.diagnosis == (code,)
    assert report.ok


def test_validate_catches_and_names_every_softmax_backward_mistake():
    kind = reference.KIND_SOFTMAX_BACKWARD
    report = validate_spec(
        spec=builtin_spec(kind),
        reference_source=REFERENCE_SOURCES[kind],
        executor=SourceLookupExecutor(),
    )
    assert report.reference_passed and report.ok
    assert len(report.rows) == 14
    for row in report.rows:
        assert row.caught and row.named, (row.implementation, row.verdict.to_dict())
    # The clipped and the flushed gradient pass every check but the vanishing one.
    hidden = [r for r in report.rows if r.code == "backward-vanishing-hidden"]
    assert {r.failed_checks for r in hidden} == {("backward-vanishing",)}


def test_validate_catches_and_names_every_attention_backward_mistake():
    kind = reference.KIND_ATTENTION_BACKWARD
    report = validate_spec(
        spec=builtin_spec(kind),
        reference_source=REFERENCE_SOURCES[kind],
        executor=SourceLookupExecutor(),
    )
    assert report.reference_passed and report.ok
    assert len(report.rows) == 17
    for row in report.rows:
        assert row.caught and row.named, (row.implementation, row.verdict.to_dict())
        assert row.verdict.diagnosis == (row.code,), row.implementation
    # A clipped P is right wherever the softmax is not saturated: only the vanishing check
    # and the finite differences (whose causal mask saturates a first row) see it.
    clipped = next(r for r in report.rows if r.code == "backward-vanishing-hidden")
    assert "attention-backward-vanishing" in clipped.failed_checks
    assert "attention-backward-values" not in clipped.failed_checks
