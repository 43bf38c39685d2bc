"""The known wrong implementations of attention's backward pass, as students write them.

Trusted code: OUR functions, each self-contained (``np`` and ``math`` only) so that
``WrongImplementation.source`` is a student-style module. Only their bodies live here; the
catalogue that names them, with its codes and tags, is ``kinds.attention_backward``.
"""

from __future__ import annotations

import math

import numpy as np

# --- one mistake each ---------------------------------------------------------------


def backward_scale_dropped(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    dQ = dS @ K  # the forward's 1/sqrt(d_k) left out of the chain rule
    dK = np.swapaxes(dS, -1, -2) @ Q
    return dQ, dK, dV


def backward_unscaled(Q, K, V, dO, mask=None):
    S = Q @ np.swapaxes(K, -1, -2)  # no division by sqrt(d_k), forward or backward
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    return dS @ K, np.swapaxes(dS, -1, -2) @ Q, dV


def backward_softmax_constant(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dS = dO @ np.swapaxes(V, -1, -2)  # the softmax treated as a constant: no Jacobian
    if mask is not None:
        dS = np.where(mask, dS, 0.0)
    dQ = dS @ K / math.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / math.sqrt(d_k)
    return dQ, dK, dV


def backward_weights_constant(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO  # the weights taken as constants: only V gets a gradient
    return np.zeros_like(Q), np.zeros_like(K), dV


def backward_diagonal_only(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (1 - P) * dP  # the Jacobian's diagonal only, as for a sigmoid
    dQ = dS @ K / math.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / math.sqrt(d_k)
    return dQ, dK, dV


def backward_dv_untransposed(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = P @ dO  # P where its transpose belongs: runs whenever n_q = n_k
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    dQ = dS @ K / math.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / math.sqrt(d_k)
    return dQ, dK, dV


def backward_dk_untransposed(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    dQ = dS @ K / math.sqrt(d_k)
    dK = dS @ Q / math.sqrt(d_k)  # dS where dS^T belongs, as for dQ
    return dQ, dK, dV


def backward_mask_leak(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)  # recomputed for the backward, without the mask
    masked = S if mask is None else np.where(mask, S, -np.inf)
    P_fwd = np.exp(masked - masked.max(axis=-1, keepdims=True))
    P_fwd = P_fwd / P_fwd.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P_fwd, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    dQ = dS @ K / math.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / math.sqrt(d_k)
    return dQ, dK, dV


def backward_mask_ignored(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)  # the mask is accepted, never used
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    dQ = dS @ K / math.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / math.sqrt(d_k)
    return dQ, dK, dV


def backward_mask_after_softmax(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    if mask is not None:
        P = P * mask  # masked after the softmax: the rows no longer sum to 1
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    dQ = dS @ K / math.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / math.sqrt(d_k)
    return dQ, dK, dV


def backward_dot_T(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ K.T / math.sqrt(d_k)  # .T reverses the batch axes too
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = P.T @ dO
    dP = dO @ V.T
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    dQ = dS @ K / math.sqrt(d_k)
    dK = dS.T @ Q / math.sqrt(d_k)
    return dQ, dK, dV


def backward_two_dims_only(Q, K, V, dO, mask=None):
    n, d_k = Q.shape  # matrices only
    S = Q @ K.T / math.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=1).reshape(n, 1))
    P = P / P.sum(axis=1).reshape(n, 1)
    dP = dO @ V.T
    dS = P * (dP - np.sum(dP * P, axis=1).reshape(n, 1))
    return dS @ K / math.sqrt(d_k), dS.T @ Q / math.sqrt(d_k), P.T @ dO


def backward_mask_boolean_index(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    if mask is not None:
        S[~mask] = -np.inf  # the mask must have the scores' exact shape: it cannot broadcast
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    dQ = dS @ K / math.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / math.sqrt(d_k)
    return dQ, dK, dV


def backward_clips_p(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    Pc = np.clip(P, 1e-7, 1 - 1e-7)  # "to keep the gradient alive"
    if mask is not None:
        Pc = np.where(mask, Pc, 0.0)
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = Pc * (dP - np.sum(dP * Pc, axis=-1, keepdims=True))
    dQ = dS @ K / math.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / math.sqrt(d_k)
    return dQ, dK, dV


def backward_unstable(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    E = np.exp(S)  # no maximum subtracted: inf / inf for large scores
    if mask is not None:
        E = np.where(mask, E, 0.0)
    P = E / E.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    dQ = dS @ K / math.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / math.sqrt(d_k)
    return dQ, dK, dV


def backward_in_place(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    Q /= math.sqrt(d_k)  # right values, but the caller's Q is changed
    S = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    dQ = dS @ K / math.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q  # Q already holds Q / sqrt(d_k)
    return dQ, dK, dV


def backward_rounded(Q, K, V, dO, mask=None):
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    dV = np.swapaxes(P, -1, -2) @ dO
    dP = dO @ np.swapaxes(V, -1, -2)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
    dQ = dS @ K / math.sqrt(d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q / math.sqrt(d_k)
    return np.round(dQ, 4), np.round(dK, 4), np.round(dV, 4)


# --- every single mistake above as an option, for the search for two at once ----------------


def attention_backward_variant(
    Q,
    K,
    V,
    dO,
    mask=None,
    *,
    scale="chained",
    softmax="stable",
    jacobian="softmax",
    dv="transposed",
    dk="transposed",
    mask_how="forward",
    transpose="swapaxes",
):
    def t(a):
        return a.T if transpose == "T" else np.swapaxes(a, -1, -2)

    s = math.sqrt(Q.shape[-1])
    S = Q @ t(K) / (1.0 if scale == "none" else s)
    used = None if mask_how in ("ignored", "after") else mask

    def weights(scores, m):
        if softmax == "naive":
            E = np.exp(scores)
            if m is not None:
                E = np.where(m, E, 0.0)
            return E / E.sum(axis=-1, keepdims=True)
        if m is not None:
            scores = np.where(m, scores, -np.inf)
        P = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return P / P.sum(axis=-1, keepdims=True)

    P = weights(S, used)
    if mask_how == "after" and mask is not None:
        P = P * mask
    P_back = weights(S, None) if mask_how == "recomputed" else P
    dV = (P if dv == "p" else t(P)) @ dO
    dP = dO @ t(V)
    if jacobian == "constant":
        dS = dP if used is None else np.where(used, dP, 0.0)
    elif jacobian == "none":
        dS = np.zeros_like(dP)
    elif jacobian == "diagonal":
        dS = P_back * (1 - P_back) * dP
    else:
        Pg = P_back
        if jacobian == "clipped":
            Pg = np.clip(P_back, 1e-7, 1 - 1e-7)
            if used is not None:
                Pg = np.where(used, Pg, 0.0)
        dS = Pg * (dP - np.sum(dP * Pg, axis=-1, keepdims=True))
    back = s if scale == "chained" else 1.0
    dQ = dS @ K / back
    dK = (dS if dk == "ds" else t(dS)) @ Q / back
    return dQ, dK, dV
