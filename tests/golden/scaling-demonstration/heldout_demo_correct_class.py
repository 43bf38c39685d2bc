import numpy as np


class Demo:
    def __init__(self, d_k, seed, n):
        g = np.random.default_rng(seed)
        self.q = g.standard_normal((n, d_k))
        self.k = g.standard_normal((n, d_k))
        self.d_k = d_k

    def scores(self, scale):
        return (self.q @ self.k.T) / (np.sqrt(self.d_k) if scale else 1.0)

    @staticmethod
    def top(row):
        row = row - row.max()
        return float(np.exp(row).max() / np.exp(row).sum())


def scaling_demo(d_k, rng_seed, n=16):
    d = Demo(d_k, rng_seed, n)
    a, b = d.scores(False), d.scores(True)
    return a.max(), b.max(), d.top(a[0]), d.top(b[0])
