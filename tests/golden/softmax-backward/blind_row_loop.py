# softmax backward, one row at a time so I can check each Jacobian
import numpy as np


def softmax_backward(p, g):
    p = np.asarray(p, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    n = p.shape[-1]
    rows_p = p.reshape(-1, n)
    rows_g = g.reshape(-1, n)
    out = np.empty_like(rows_p)
    for r in range(rows_p.shape[0]):
        pr = rows_p[r]
        # Jacobian of softmax for this row
        jac = np.diag(pr) - np.outer(pr, pr)
        # J is symmetric so J.T @ g == J @ g
        out[r] = jac @ rows_g[r]
        # print("row", r, out[r])
    return out.reshape(p.shape)
