"""Trusted generators of hidden inputs. Everything is drawn from the Generator passed in, so a
stored seed replays exactly the same inputs."""

from __future__ import annotations

import numpy as np

from grader.engine import reference
from grader.engine.executors.base import Call

# The worked example of the question's seed (3 tokens, d_k = 4), public on the question page.
WORKED_Q = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 1, 0]], dtype=np.float64)
WORKED_K = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]], dtype=np.float64)
WORKED_V = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float64)
WORKED_OUTPUT = np.array([[0.814, 0.494], [0.494, 0.814], [0.767, 0.616]])


def unit(rng: np.random.Generator, shape: tuple[int, ...], dtype: type = np.float64) -> np.ndarray:
    """Unit-variance normal entries: the setting of the variance argument for √d_k."""
    return rng.standard_normal(shape).astype(dtype, copy=False)


def key_mask(rng: np.random.Generator, shape: tuple[int, ...], p_keep: float = 0.6) -> np.ndarray:
    """A boolean mask with at least one allowed key in every row (a row with none is undefined)."""
    mask = rng.random(shape) < p_keep
    flat = mask.reshape(-1, shape[-1])
    rows_empty = ~flat.any(axis=1)
    flat[rows_empty, rng.integers(0, shape[-1], size=int(rows_empty.sum()))] = True
    # Keep at least one masked key overall, or the mask would test nothing.
    if flat.all():
        flat[0, 0] = False
        if not flat[0].any():
            flat[0, -1] = True
    return flat.reshape(shape)


def causal_mask(n: int) -> np.ndarray:
    """True on and below the diagonal: query i may attend to keys 0 … i."""
    return np.tril(np.ones((n, n), dtype=bool))


def attention_call(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    return_inputs: bool = False,
) -> Call:
    # Arguments go positionally: the contract fixes their order, not the student's names.
    args: tuple = (Q, K, V) if mask is None else (Q, K, V, mask)
    return Call(args=args, return_inputs=return_inputs)


def mha_weights(
    rng: np.random.Generator, d_model: int, dtype: type = np.float64
) -> tuple[np.ndarray, ...]:
    """W_q, W_k, W_v, W_o with variance 1/d_model, so X·W keeps unit-variance entries."""
    scale = 1.0 / np.sqrt(d_model)
    return tuple((rng.standard_normal((d_model, d_model)) * scale).astype(dtype) for _ in range(4))


def mha_call(
    X: np.ndarray,
    weights: tuple[np.ndarray, ...],
    n_heads: int,
    mask: np.ndarray | None = None,
    *,
    return_inputs: bool = False,
) -> Call:
    args: tuple = (X, *weights, int(n_heads))
    if mask is not None:
        args = (*args, mask)
    return Call(args=args, return_inputs=return_inputs)


def softmax_call(x: np.ndarray, axis: int | None = None, *, return_inputs: bool = False) -> Call:
    # Without an axis the student's default (-1) is what is tested.
    args: tuple = (x,) if axis is None else (x, int(axis))
    return Call(args=args, return_inputs=return_inputs)


def softmax_backward_call(p: np.ndarray, g: np.ndarray, *, return_inputs: bool = False) -> Call:
    return Call(args=(p, g), return_inputs=return_inputs)


def softmax_backward_inputs(
    rng: np.random.Generator, shape: tuple[int, ...], scale: float = 3.0, dtype: type = np.float64
) -> tuple[np.ndarray, np.ndarray]:
    """p = softmax of scores of std ``scale`` along the last axis, and a unit-variance g."""
    p = reference.softmax(unit(rng, shape) * scale)
    return p.astype(dtype), unit(rng, shape).astype(dtype)


def attention_backward_call(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    dO: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    return_inputs: bool = False,
) -> Call:
    args: tuple = (Q, K, V, dO) if mask is None else (Q, K, V, dO, mask)
    return Call(args=args, return_inputs=return_inputs)


def attention_backward_inputs(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    scale: float = 1.0,
    dtype: type = np.float64,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Q, K, V and dO, each of ``shape`` (..., n, d): the three gradients then share it, so the
    tuple returned crosses the sandbox as one array. Q and K are multiplied by ``scale``, which
    multiplies the scores by its square."""
    Q, K = (unit(rng, shape) * scale for _ in range(2))
    V, dO = unit(rng, shape), unit(rng, shape)
    return tuple(a.astype(dtype) for a in (Q, K, V, dO))  # type: ignore[return-value]


def saturated_scores(rng: np.random.Generator, shape: tuple[int, ...], bump: float) -> np.ndarray:
    """Scores of std 2 with one entry of each row raised by ``bump``: its softmax is nearly
    one-hot, the others' weights about exp(-bump)."""
    scores = unit(rng, shape) * 2.0
    flat = scores.reshape(-1, shape[-1])
    flat[np.arange(flat.shape[0]), rng.integers(0, shape[-1], size=flat.shape[0])] += bump
    return flat.reshape(shape)


# The demonstration at a head size whose raw scores reach ~1e3 (std √d_k = 512): with these
# seeds and n, a raw score of row 0 passes 709, where exp() overflows. Four tokens keep the
# draws small.
DEMO_LARGE_D_K = 2**18
DEMO_LARGE_N = 4
DEMO_OVERFLOW_SEEDS = (4, 6, 8)


def demo_call(d_k: int, seed: int, n: int | None = None) -> Call:
    """A call of the ten-minute demonstration; without n the student's default (16) is tested."""
    args: tuple = (int(d_k), int(seed)) if n is None else (int(d_k), int(seed), int(n))
    return Call(args=args)
