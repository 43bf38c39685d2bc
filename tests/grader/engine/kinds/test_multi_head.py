"""Tests of grader/engine/kinds/multi_head.py: the multi-head-attention kind's own content."""

from __future__ import annotations

import numpy as np

from grader.engine.kinds import multi_head
from grader.engine.kinds.base import BATCH

KIND = multi_head.KIND


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
