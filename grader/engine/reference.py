"""Trusted reference maths of the exercise kinds. No Django imports.

Each kind's module (``grader.engine.kinds``) names its reference among these functions; the
checks, the pictures and the multi-head reference share them. The reference of a kind by its
name is the registry's (``kinds.reference_evaluate``): nothing here asks the registry.

The checks judge a student's outputs against these. They always compute in float64, whatever
the input dtype, so a float32 submission is compared with the exact answer for its (float32)
inputs and the tolerance alone decides how much float32 rounding is acceptable.
"""

from __future__ import annotations

import numpy as np

KIND_ATTENTION = "attention"
KIND_MULTI_HEAD = "multi-head-attention"
KIND_SOFTMAX = "softmax"
KIND_SOFTMAX_BACKWARD = "softmax_backward"
KIND_ATTENTION_BACKWARD = "attention_backward"
KIND_DEMONSTRATION = "demonstration"
# The names every check may judge (the registry, grader.engine.kinds.KINDS, has the same).
KINDS = (
    KIND_ATTENTION,
    KIND_MULTI_HEAD,
    KIND_SOFTMAX,
    KIND_SOFTMAX_BACKWARD,
    KIND_ATTENTION_BACKWARD,
    KIND_DEMONSTRATION,
)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis``, stable for any finite input (the max is subtracted first)."""
    x = np.asarray(x, dtype=np.float64)
    # -inf entries (masked keys) stay -inf after the shift and become exactly 0.
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax_backward(p: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The gradient with respect to the scores of softmax along the last axis, from its output
    ``p`` and the upstream gradient ``g``: the vector-Jacobian product
    p * (g - sum(g * p, axis=-1, keepdims=True)).

    The Jacobian of one row, p_i (delta_ij - p_j), is symmetric, so J^T g = J g; it is never
    built."""
    p = np.asarray(p, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    return p * (g - np.sum(g * p, axis=-1, keepdims=True))


def attention_backward(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    dO: np.ndarray,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The gradients (dQ, dK, dV) of sum(O * dO), O = attention(Q, K, V, mask), batched.

    The softmax's part is ``softmax_backward``: a masked key has weight exactly 0, so its
    gradient is exactly 0 too, and nothing flows back into a masked score."""
    Q, K, V, dO = (np.asarray(a, dtype=np.float64) for a in (Q, K, V, dO))
    scale = np.sqrt(Q.shape[-1])
    P = attention_weights(Q, K, mask)
    dV = np.swapaxes(P, -1, -2) @ dO
    dS = softmax_backward(P, dO @ np.swapaxes(V, -1, -2))
    return dS @ K / scale, np.swapaxes(dS, -1, -2) @ Q / scale, dV


def attention_backward_stacked(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    dO: np.ndarray,
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """``attention_backward``'s three gradients as numpy reads the tuple: one array of shape
    (3, ..., n, d), which needs n_q = n_k and d_k = d_v (every graded input has them)."""
    return np.stack(attention_backward(Q, K, V, dO, mask))


def attention_loss(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    dO: np.ndarray,
    mask: np.ndarray | None = None,
) -> float:
    """sum(O * dO): the scalar whose gradients the attention backward returns."""
    return float(np.sum(attention(Q, K, V, mask) * np.asarray(dO, dtype=np.float64)))


def attention_finite_differences(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    dO: np.ndarray,
    mask: np.ndarray | None = None,
    step: float = 1e-5,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Central differences of ``attention_loss`` in every entry of Q, K and V: the gradients
    from the forward pass alone, with no formula of the backward's in them."""
    inputs = [np.array(a, dtype=np.float64) for a in (Q, K, V)]
    grads = []
    for a in inputs:
        grad = np.zeros_like(a)
        for index in np.ndindex(a.shape):
            saved = a[index]
            losses = []
            for sign in (1.0, -1.0):
                a[index] = saved + sign * step
                losses.append(attention_loss(*inputs, dO, mask))
            a[index] = saved
            grad[index] = (losses[0] - losses[1]) / (2 * step)
        grads.append(grad)
    return grads[0], grads[1], grads[2]


def scaling_demonstration(d_k: int, rng_seed: int, n: int = 16) -> np.ndarray:
    """The question's ten-minute demonstration: Q then K of shape (n, d_k) drawn from
    ``np.random.default_rng(rng_seed)``; the largest entry of Q Kᵀ and of Q Kᵀ / √d_k, and the
    largest softmax weight of row 0 without and with the division, in that order."""
    rng = np.random.default_rng(int(rng_seed))
    Q = rng.standard_normal((int(n), int(d_k)))
    K = rng.standard_normal((int(n), int(d_k)))
    scores = Q @ K.T
    scaled = scores / np.sqrt(d_k)
    return np.array(
        [scores.max(), scaled.max(), softmax(scores[0]).max(), softmax(scaled[0]).max()]
    )


def attention_weights(
    Q: np.ndarray,
    K: np.ndarray,
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """softmax(Q Kᵀ / √d_k) with masked-out keys (mask False) given zero weight."""
    Q = np.asarray(Q, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    d_k = Q.shape[-1]
    scores = (Q @ np.swapaxes(K, -1, -2)) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    return softmax(scores, axis=-1)


def attention(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """Scaled dot-product attention: softmax(Q Kᵀ / √d_k) V, batch dimensions broadcast."""
    return attention_weights(Q, K, mask) @ np.asarray(V, dtype=np.float64)


def _split_heads(t: np.ndarray, n_heads: int) -> np.ndarray:
    """(..., n, d_model) -> (..., h, n, d_head); head h: columns h·d_head … (h+1)·d_head - 1."""
    *lead, n, d_model = t.shape
    t = t.reshape(*lead, n, n_heads, d_model // n_heads)
    return np.swapaxes(t, -2, -3)


def head_mask(mask: np.ndarray | None) -> np.ndarray | None:
    """A mask broadcastable to (..., n, n), given a head axis so it broadcasts to (..., h, n, n)."""
    if mask is None:
        return None
    m = np.asarray(mask, dtype=bool)
    while m.ndim < 2:
        m = m[np.newaxis]
    return m[..., np.newaxis, :, :]


def multi_head_attention(
    X: np.ndarray,
    W_q: np.ndarray,
    W_k: np.ndarray,
    W_v: np.ndarray,
    W_o: np.ndarray,
    n_heads: int,
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """Multi-head attention; each head scales by √d_head, d_head = d_model / n_heads."""
    X = np.asarray(X, dtype=np.float64)
    n_heads = int(n_heads)
    q, k, v = (_split_heads(X @ np.asarray(w, dtype=np.float64), n_heads) for w in (W_q, W_k, W_v))
    heads = attention(q, k, v, head_mask(mask))  # (..., h, n, d_head)
    heads = np.swapaxes(heads, -2, -3)  # (..., n, h, d_head)
    concat = heads.reshape(*heads.shape[:-2], X.shape[-1])
    return concat @ np.asarray(W_o, dtype=np.float64)
