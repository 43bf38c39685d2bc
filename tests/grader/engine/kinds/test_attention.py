"""Tests of grader/engine/kinds/attention.py: the attention kind's own content."""

from __future__ import annotations

import numpy as np

from grader.engine.kinds import attention

KIND = attention.KIND


def test_the_weights_probe_reads_back_q_k_and_the_weights():
    from grader.engine.kinds.base import WEIGHTS

    probe = next(p for p in KIND.diagnostic_probes(np.random.default_rng(0)) if WEIGHTS in p.tags)
    out = KIND.reference(*probe.call.args)
    ((q, _, w),) = KIND.weight_triples(probe.call, out)
    np.testing.assert_array_equal(q, probe.call.args[0])
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)
