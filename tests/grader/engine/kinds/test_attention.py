"""Tests of grader/engine/kinds/attention.py: the attention kind's own content."""

from __future__ import annotations

import numpy as np

from grader.engine.kinds import attention
from grader.engine.kinds.base import BATCH
from tests.grader.engine.kinds import helpers

KIND = attention.KIND


def test_is_registered_under_its_name():
    from grader.engine.kinds import kind_get

    assert kind_get("attention") is KIND


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


def test_variant_options_are_the_catalogue():
    helpers.assert_variant_options_are_the_catalogue(KIND)


def test_the_weights_probe_reads_back_q_k_and_the_weights():
    from grader.engine.kinds.base import WEIGHTS

    probe = next(p for p in KIND.diagnostic_probes(np.random.default_rng(0)) if WEIGHTS in p.tags)
    out = KIND.reference(*probe.call.args)
    ((q, _, w),) = KIND.weight_triples(probe.call, out)
    np.testing.assert_array_equal(q, probe.call.args[0])
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)
