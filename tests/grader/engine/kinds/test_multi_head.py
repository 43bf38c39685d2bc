"""Tests of grader/engine/kinds/multi_head.py: the multi-head-attention kind's own content."""

from __future__ import annotations

import numpy as np

from grader.engine.kinds import multi_head
from grader.engine.kinds.base import BATCH
from tests.grader.engine.kinds import helpers

KIND = multi_head.KIND


def test_is_registered_under_its_name():
    from grader.engine.kinds import kind_get

    assert kind_get("multi-head-attention") is KIND


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


def test_every_head_of_a_weights_probe_is_read_back():
    from grader.engine.kinds.base import WEIGHTS

    probes = [p for p in KIND.diagnostic_probes(np.random.default_rng(0)) if WEIGHTS in p.tags]
    for probe in probes:
        if probe.form:
            continue
        out = KIND.reference(*probe.call.args)
        triples = KIND.weight_triples(probe.call, out)
        assert len(triples) == probe.call.args[5]
        for _, _, w in triples:
            np.testing.assert_allclose(w.sum(axis=-1), 1.0)
    assert KIND.weight_triples(probes[0].call, np.zeros((1, 1))) is None


def test_one_batched_input_has_unrelated_sequences():
    # Batched copies of a 2-D input repeat its tokens, which hides a batch folded into the
    # sequence axis; the diagnosis needs one input whose batch elements share nothing.
    unrelated = [
        p for p in KIND.diagnostic_probes(np.random.default_rng(0)) if p.form and p.base is None
    ]
    assert len(unrelated) == 1
    (x,) = unrelated[0].call.args[:1]
    assert x.ndim == 3 and x.shape[0] > 1
    assert BATCH in unrelated[0].tags
    assert not np.allclose(np.sort(x[0], axis=None), np.sort(x[1], axis=None))
