"""The known wrong implementations of the ten-minute demonstration, as students write them.

Trusted code: OUR functions, each self-contained (``np`` and ``math`` only) so that
``WrongImplementation.source`` is a student-style module. Only their bodies live here; the
catalogue that names them, with its codes and tags, is ``kinds.demonstration``.
"""

from __future__ import annotations

import math

import numpy as np

# --- one mistake each ---------------------------------------------------------------


def demo_divides_by_d(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = raw / d_k  # the variance, not the standard deviation
    top = [
        np.max(np.exp(s[0] - s[0].max()) / np.sum(np.exp(s[0] - s[0].max()))) for s in (raw, scaled)
    ]
    return raw.max(), scaled.max(), top[0], top[1]


def demo_divides_by_root_n(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = raw / math.sqrt(n)  # the number of tokens, not the head size
    top = [
        np.max(np.exp(s[0] - s[0].max()) / np.sum(np.exp(s[0] - s[0].max()))) for s in (raw, scaled)
    ]
    return raw.max(), scaled.max(), top[0], top[1]


def demo_never_divides(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = Q @ K.T  # the "scaled" scores are the raw ones again
    top = [
        np.max(np.exp(s[0] - s[0].max()) / np.sum(np.exp(s[0] - s[0].max()))) for s in (raw, scaled)
    ]
    return raw.max(), scaled.max(), top[0], top[1]


def demo_divides_by_half_d(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = raw / d_k**1 / 2  # ** binds before /: raw / (d_k / 2), not raw / √d_k
    top = [
        np.max(np.exp(s[0] - s[0].max()) / np.sum(np.exp(s[0] - s[0].max()))) for s in (raw, scaled)
    ]
    return raw.max(), scaled.max(), top[0], top[1]


def demo_transposed_draws(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((d_k, n)).T  # drawn as (d_k, n): the same numbers, other places
    K = rng.standard_normal((d_k, n)).T
    raw = Q @ K.T
    scaled = raw / np.sqrt(d_k)
    top = [
        np.max(np.exp(s[0] - s[0].max()) / np.sum(np.exp(s[0] - s[0].max()))) for s in (raw, scaled)
    ]
    return raw.max(), scaled.max(), top[0], top[1]


def demo_k_before_q(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    K = rng.standard_normal((n, d_k))  # K drawn first: row 0 of the scores is another row
    Q = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = raw / np.sqrt(d_k)
    top = [
        np.max(np.exp(s[0] - s[0].max()) / np.sum(np.exp(s[0] - s[0].max()))) for s in (raw, scaled)
    ]
    return raw.max(), scaled.max(), top[0], top[1]


def demo_legacy_seed(d_k, seed, n=16):
    # The legacy generator (what np.random.seed(seed) then np.random.randn draws): other numbers.
    legacy = np.random.RandomState(seed)
    Q = legacy.randn(n, d_k)
    K = legacy.randn(n, d_k)
    raw = Q @ K.T
    scaled = raw / np.sqrt(d_k)
    top = [
        np.max(np.exp(s[0] - s[0].max()) / np.sum(np.exp(s[0] - s[0].max()))) for s in (raw, scaled)
    ]
    return raw.max(), scaled.max(), top[0], top[1]


def demo_uniform_draws(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.random((n, d_k))  # uniform on [0, 1), not a standard normal
    K = rng.random((n, d_k))
    raw = Q @ K.T
    scaled = raw / np.sqrt(d_k)
    top = [
        np.max(np.exp(s[0] - s[0].max()) / np.sum(np.exp(s[0] - s[0].max()))) for s in (raw, scaled)
    ]
    return raw.max(), scaled.max(), top[0], top[1]


def demo_softmax_axis_0(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = raw / np.sqrt(d_k)
    tops = []
    for s in (raw, scaled):
        e = np.exp(s - s.max(axis=0, keepdims=True))
        w = e / e.sum(axis=0, keepdims=True)  # each key's column sums to 1
        tops.append(w[0].max())
    return raw.max(), scaled.max(), tops[0], tops[1]


def demo_softmax_whole_matrix(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = raw / np.sqrt(d_k)
    tops = []
    for s in (raw, scaled):
        e = np.exp(s - s.max())
        tops.append((e / e.sum())[0].max())  # one sum over every query's scores
    return raw.max(), scaled.max(), tops[0], tops[1]


def demo_last_row(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = raw / np.sqrt(d_k)
    top = [
        np.max(np.exp(s[-1] - s[-1].max()) / np.sum(np.exp(s[-1] - s[-1].max())))
        for s in (raw, scaled)
    ]
    return raw.max(), scaled.max(), top[0], top[1]


def demo_top_weight_any_row(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = raw / np.sqrt(d_k)
    tops = []
    for s in (raw, scaled):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        tops.append((e / e.sum(axis=-1, keepdims=True)).max())  # the largest weight of any row
    return raw.max(), scaled.max(), tops[0], tops[1]


def demo_row_0_scores(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = (Q @ K.T)[0]  # the largest score of row 0 only, not of the whole matrix
    scaled = raw / np.sqrt(d_k)
    top = [np.max(np.exp(s - s.max()) / np.sum(np.exp(s - s.max()))) for s in (raw, scaled)]
    return raw.max(), scaled.max(), top[0], top[1]


def demo_unstable_softmax(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = raw / np.sqrt(d_k)
    # exp() without the max subtracted: inf above ~709, and inf / inf is nan.
    top = [np.max(np.exp(s[0]) / np.sum(np.exp(s[0]))) for s in (raw, scaled)]
    return raw.max(), scaled.max(), top[0], top[1]


def demo_rounded(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = raw / np.sqrt(d_k)
    top = [
        np.max(np.exp(s[0] - s[0].max()) / np.sum(np.exp(s[0] - s[0].max()))) for s in (raw, scaled)
    ]
    return tuple(round(float(v), 2) for v in (raw.max(), scaled.max(), top[0], top[1]))


def demo_two_generators(d_k, seed, n=16):
    Q = np.random.default_rng(seed).standard_normal((n, d_k))
    K = np.random.default_rng(seed).standard_normal((n, d_k))  # a fresh generator: K equals Q
    raw = Q @ K.T
    scaled = raw / np.sqrt(d_k)
    top = [
        np.max(np.exp(s[0] - s[0].max()) / np.sum(np.exp(s[0] - s[0].max()))) for s in (raw, scaled)
    ]
    return raw.max(), scaled.max(), top[0], top[1]


def demo_weights_never_divided(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    raw = Q @ K.T
    scaled = raw / np.sqrt(d_k)
    e = np.exp(raw[0] - raw[0].max())
    top = np.max(e / np.sum(e))
    return raw.max(), scaled.max(), top, top  # the "scaled" weights from the raw row again
