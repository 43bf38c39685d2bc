import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    c = 1 / np.sqrt(Q.shape[-1])
    S = np.einsum("...id,...jd->...ij", Q, K) * c
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(-1, keepdims=True))
    P = P / P.sum(-1, keepdims=True)
    dV = np.einsum("...ij,...id->...jd", P, dO)
    dP = np.einsum("...id,...jd->...ij", dO, V)
    dS = P * (dP - np.einsum("...ij,...ij->...i", P, dP)[..., None])
    dQ = np.einsum("...ij,...jd->...id", dS, K) * c
    dK = np.einsum("...ij,...id->...jd", dS, Q) * c
    return dQ, dK, dV
