"""Correct implementations written other reasonable ways: trusted functions for the pure tests.

Each must pass every check and be named no misconception. (The golden suite has the same
styles as student files, graded through the sandbox.)
"""

from __future__ import annotations

import math

import numpy as np


def attention_einsum(Q, K, V, mask=None):
    scores = np.einsum("...nd,...md->...nm", Q, K) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w /= w.sum(axis=-1, keepdims=True)
    return np.einsum("...nm,...mv->...nv", w, V)


def attention_scale_q_first(Q, K, V, mask=None):
    Q = Q / np.sqrt(Q.shape[-1])  # a new array: the caller's Q is untouched
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    m = scores.max(axis=-1, keepdims=True)
    log_z = m + np.log(np.exp(scores - m).sum(axis=-1, keepdims=True))
    return np.exp(scores - log_z) @ V


def attention_float32(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float32) for a in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.float32(np.sqrt(Q.shape[-1]))
    if mask is not None:
        scores = np.where(mask, scores, np.float32(-np.inf))
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_loops(Q, K, V, mask=None):
    """Explicit loops over the broadcast batch, queries and keys."""
    Q, K, V = np.asarray(Q), np.asarray(K), np.asarray(V)
    n, d_k = Q.shape[-2:]
    m, d_v = K.shape[-2], V.shape[-1]
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    if mask is not None:
        batch = np.broadcast_shapes(batch, np.asarray(mask).shape[:-2])
        mask = np.broadcast_to(mask, (*batch, n, m))
    Qb = np.broadcast_to(Q, (*batch, n, d_k))
    Kb = np.broadcast_to(K, (*batch, m, d_k))
    Vb = np.broadcast_to(V, (*batch, m, d_v))
    out = np.zeros((*batch, n, d_v))
    for idx in np.ndindex(*batch):
        for i in range(n):
            scores = [
                sum(Qb[idx][i, t] * Kb[idx][j, t] for t in range(d_k)) / math.sqrt(d_k)
                for j in range(m)
            ]
            allowed = [True] * m if mask is None else list(mask[idx][i])
            top = max(s for s, ok in zip(scores, allowed, strict=True) if ok)
            e = [math.exp(s - top) if ok else 0.0 for s, ok in zip(scores, allowed, strict=True)]
            total = sum(e)
            for j in range(m):
                out[idx][i] += (e[j] / total) * Vb[idx][j]
    return out


def mha_einsum(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *lead, n, d_model = X.shape
    d_head = d_model // n_heads
    q = (X @ W_q).reshape(*lead, n, n_heads, d_head)
    k = (X @ W_k).reshape(*lead, n, n_heads, d_head)
    v = (X @ W_v).reshape(*lead, n, n_heads, d_head)
    scores = np.einsum("...qhd,...khd->...hqk", q, k) / np.sqrt(d_head)
    if mask is not None:
        mk = np.asarray(mask, dtype=bool)
        while mk.ndim < 2:
            mk = mk[None]
        scores = np.where(mk[..., None, :, :], scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w /= w.sum(axis=-1, keepdims=True)
    heads = np.einsum("...hqk,...khd->...qhd", w, v)
    return heads.reshape(*lead, n, d_model) @ W_o


def mha_head_loop(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    """One head at a time, slicing the columns, then concatenating."""
    d_model = X.shape[-1]
    d_head = d_model // n_heads
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    outs = []
    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        q, k, v = Q[..., cols] / math.sqrt(d_head), K[..., cols], V[..., cols]
        s = q @ np.swapaxes(k, -1, -2)
        if mask is not None:
            s = np.where(mask, s, -1e30)
        s = s - s.max(axis=-1, keepdims=True)
        w = np.exp(s)
        outs.append((w / w.sum(axis=-1, keepdims=True)) @ v)
    return np.concatenate(outs, axis=-1) @ W_o


def softmax_logsumexp(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    return np.exp(x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)))


def softmax_moveaxis_loops(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    moved = np.moveaxis(x, axis, -1)
    out = np.empty_like(moved)
    for idx in np.ndindex(*moved.shape[:-1]):
        row = moved[idx]
        top = max(row)
        e = [math.exp(v - top) for v in row]
        total = sum(e)
        out[idx] = [v / total for v in e]
    return np.moveaxis(out, -1, axis)


def softmax_float32(x, axis=-1):
    x = np.asarray(x, dtype=np.float32)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def backward_jacobian_einsum(p, g):
    # One Jacobian per row, contracted with g along its own row only.
    J = p[..., :, None] * (np.eye(p.shape[-1]) - p[..., None, :])
    return np.einsum("...ij,...j->...i", J, g)


def backward_row_loops(p, g):
    p = np.asarray(p, dtype=np.float64)
    out = np.empty_like(p)
    for idx in np.ndindex(*p.shape[:-1]):
        row, up = p[idx], g[idx]
        dot = sum(float(a) * float(b) for a, b in zip(row, up, strict=True))
        out[idx] = [a * (b - dot) for a, b in zip(row, up, strict=True)]
    return out


def demo_one_draw(d_k, seed, n=16):
    # Q and K in one draw of shape (2, n, d_k): the same numbers as Q then K.
    Q, K = np.random.default_rng(seed).normal(0.0, 1.0, (2, n, d_k))
    scores = np.einsum("id,jd->ij", Q, K)
    scaled = np.einsum("id,jd->ij", Q / d_k**0.25, K / d_k**0.25)
    weights = [np.exp(s[0] - s[0].max()) for s in (scores, scaled)]
    return (scores.max(), scaled.max(), *[float(np.max(w / w.sum())) for w in weights])


def demo_loops(d_k, seed, n=16):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d_k)).tolist()
    K = rng.standard_normal((n, d_k)).tolist()
    raw = [[math.fsum(a * b for a, b in zip(q, k, strict=True)) for k in K] for q in Q]
    largest = max(max(row) for row in raw)

    def top(row):
        m = max(row)
        e = [math.exp(v - m) for v in row]
        return max(e) / math.fsum(e)

    root = math.sqrt(d_k)
    return largest, largest / root, top(raw[0]), top([v / root for v in raw[0]])


def attention_backward_einsum(Q, K, V, dO, mask=None):
    c = 1.0 / np.sqrt(Q.shape[-1])
    S = np.einsum("...id,...jd->...ij", Q, K) * c
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dP = np.einsum("...iv,...jv->...ij", dO, V)
    dS = P * (dP - np.einsum("...ij,...ij->...i", P, dP)[..., None])
    dQ = np.einsum("...ij,...jd->...id", dS, K) * c
    dK = np.einsum("...ij,...id->...jd", dS, Q) * c
    return dQ, dK, np.einsum("...ij,...iv->...jv", P, dO)


def attention_backward_row_jacobians(Q, K, V, dO, mask=None):
    # The softmax backward one row at a time, through its n x n Jacobian.
    d = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = np.empty_like(P)
    for idx in np.ndindex(*P.shape[:-1]):
        p = P[idx]
        dS[idx] = (np.diag(p) - np.outer(p, p)) @ dP[idx]
    dK = np.swapaxes(dS, -1, -2) @ Q / math.sqrt(d)
    return dS @ K / math.sqrt(d), dK, np.swapaxes(P, -1, -2) @ dO


CORRECT = {
    "attention": [attention_einsum, attention_scale_q_first, attention_float32, attention_loops],
    "multi-head-attention": [mha_einsum, mha_head_loop],
    "softmax": [softmax_logsumexp, softmax_moveaxis_loops, softmax_float32],
    "softmax_backward": [backward_jacobian_einsum, backward_row_loops],
    "attention_backward": [attention_backward_einsum, attention_backward_row_jacobians],
    "demonstration": [demo_one_draw, demo_loops],
}
