"""The trusted reference against the worked example and independent computations."""

import math

import numpy as np

from grader.engine import reference
from grader.engine.inputs import WORKED_K, WORKED_OUTPUT, WORKED_Q, WORKED_V


def test_worked_example_of_seed_002():
    out = reference.attention(WORKED_Q, WORKED_K, WORKED_V)
    np.testing.assert_allclose(out, WORKED_OUTPUT, atol=1e-3)
    weights = reference.attention_weights(WORKED_Q, WORKED_K)
    np.testing.assert_allclose(weights[0], [0.506, 0.186, 0.307], atol=1e-3)


def test_attention_matches_a_scalar_loop():
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((3, 5)), rng.standard_normal((4, 5)), rng.standard_normal((4, 2))
    expected = np.zeros((3, 2))
    for i in range(3):
        s = [float(q[i] @ k[j]) / math.sqrt(5) for j in range(4)]
        e = [math.exp(x - max(s)) for x in s]
        for j in range(4):
            expected[i] += e[j] / sum(e) * v[j]
    np.testing.assert_allclose(reference.attention(q, k, v), expected, rtol=1e-12)


def test_mask_gives_zero_weight_and_broadcasts():
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((2, 3, 4, 8)), rng.standard_normal((2, 3, 5, 8))
    mask = np.array([True, False, True, True, False])
    w = reference.attention_weights(q, k, mask)
    assert w.shape == (2, 3, 4, 5)
    assert np.all(w[..., ~mask] == 0.0)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)


def test_softmax_is_stable_and_normalised():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1e4, 0.0, 1e4]])
    out = reference.softmax(x)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out.sum(axis=-1), 1.0)
    np.testing.assert_allclose(reference.softmax(x, axis=0).sum(axis=0), 1.0)


def test_multi_head_matches_head_by_head():
    rng = np.random.default_rng(3)
    d_model, h, n = 12, 3, 5
    x = rng.standard_normal((n, d_model))
    wq, wk, wv, wo = (rng.standard_normal((d_model, d_model)) for _ in range(4))
    d = d_model // h
    heads = [
        reference.attention(
            (x @ wq)[:, i * d : (i + 1) * d],
            (x @ wk)[:, i * d : (i + 1) * d],
            (x @ wv)[:, i * d : (i + 1) * d],
        )
        for i in range(h)
    ]
    expected = np.concatenate(heads, axis=-1) @ wo
    np.testing.assert_allclose(
        reference.multi_head_attention(x, wq, wk, wv, wo, h), expected, rtol=1e-10
    )
