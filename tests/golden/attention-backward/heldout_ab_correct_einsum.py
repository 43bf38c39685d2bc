import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    scale = 1.0 / np.sqrt(Q.shape[-1])
    S = np.einsum("...qd,...kd->...qk", Q, K) * scale
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    S = S - np.max(S, axis=-1, keepdims=True)
    P = np.exp(S)
    P = P / np.sum(P, axis=-1, keepdims=True)
    dV = np.einsum("...qk,...qv->...kv", P, dO)
    dP = np.einsum("...qv,...kv->...qk", dO, V)
    dS = P * (dP - np.einsum("...qk,...qk->...q", dP, P)[..., None])
    dQ = np.einsum("...qk,...kd->...qd", dS, K) * scale
    dK = np.einsum("...qk,...qd->...kd", dS, Q) * scale
    return dQ, dK, dV
