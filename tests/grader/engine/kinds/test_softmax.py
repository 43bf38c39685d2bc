"""Tests of grader/engine/kinds/softmax.py: the softmax kind's own content."""

from __future__ import annotations

import numpy as np

from grader.engine.kinds import softmax

KIND = softmax.KIND


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
