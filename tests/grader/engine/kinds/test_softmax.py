"""Tests of grader/engine/kinds/softmax.py: the softmax kind's own content."""

from __future__ import annotations

import numpy as np

from grader.engine.kinds import softmax
from grader.engine.kinds.base import BATCH
from tests.grader.engine.kinds import helpers

KIND = softmax.KIND


def test_is_registered_under_its_name():
    from grader.engine.kinds import kind_get

    assert kind_get("softmax") is KIND


def test_catalogue_is_well_formed():
    helpers.assert_catalogue_well_formed(KIND)


def test_parameters_match_the_reference():
    helpers.assert_parameters_match_the_reference(KIND)


def test_visible_examples_match_the_reference():
    helpers.assert_examples_match_the_reference(KIND)


def test_plot_calls_are_fixed():
    helpers.assert_plot_calls_fixed(KIND)


def test_diagnostic_probes_are_seeded():
    one = KIND.diagnostic_probes(np.random.default_rng(1))
    two = KIND.diagnostic_probes(np.random.default_rng(1))
    assert len(one) == len(two) > 0
    for a, b in zip(one, two, strict=True):
        assert (a.tags, a.form, a.base) == (b.tags, b.form, b.base)
        for x, y in zip(a.call.args, b.call.args, strict=True):
            np.testing.assert_array_equal(x, y)
    batched = any(p.base is not None for p in one)
    assert batched is KIND.batch_copies
    assert all(BATCH not in p.tags or p.form for p in one)


def test_no_pairs_and_no_scale():
    assert KIND.variant is None and KIND.weight_triples is None


def test_other_axes_include_the_softmax_along_the_other_axis_of_a_matrix():
    from grader.engine import reference
    from grader.engine.kinds.base import PLAIN

    probe = next(
        p
        for p in KIND.diagnostic_probes(np.random.default_rng(0))
        if PLAIN in p.tags and p.call.args[0].ndim == 2 and len(p.call.args) == 1
    )
    x = probe.call.args[0]
    others = KIND.other_axes(probe)
    assert any(np.allclose(o, reference.softmax(x, axis=0)) for o in others)
    assert not any(np.allclose(o, reference.softmax(x, axis=-1)) for o in others)
