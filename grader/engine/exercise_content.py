"""The built-in exercises: contracts, starter code, reference solutions and checks.

No Django imports. The seed migrations (0002; 0011 for the softmax backward; 0012 for the
demonstration; 0013 for the attention backward) load these rows;
tests check that the statements name every check an exercise uses and that each reference
solution passes its own checks. The slugs and signatures are a contract other tools rely on.
"""

from __future__ import annotations

from typing import Any

from grader.engine.kinds import REFERENCE_SOURCES
from grader.engine.reference import (
    KIND_ATTENTION,
    KIND_ATTENTION_BACKWARD,
    KIND_DEMONSTRATION,
    KIND_MULTI_HEAD,
    KIND_SOFTMAX,
    KIND_SOFTMAX_BACKWARD,
)

QUESTION_SLUG = "why-divide-before-softmax"

ATTENTION_STATEMENT = r"""
Write `attention(Q, K, V, mask=None)` in numpy: scaled dot-product attention,

$$\operatorname{Attention}(Q, K, V)
= \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V$$

### Contract

- `Q` has shape `(..., n, d_k)`: $n$ queries. `K` has shape `(..., m, d_k)`: $m$ keys.
  `V` has shape `(..., m, d_v)`. All are float arrays (float64, or float32 in one check).
- Leading batch dimensions broadcast against each other as in `numpy.matmul`; there may be none
  (2-D inputs) or several (e.g. batch and heads).
- `mask` is `None` or a boolean array broadcastable to `(..., n, m)`. **True means the query may
  attend to the key** (PyTorch's convention); a key masked out (False) must get zero weight.
  Every query has at least one allowed key.
- Return a float array of shape `(..., n, d_v)`, and leave the inputs unchanged.
- The softmax runs over the keys (the last axis of the scores), after the division by $\sqrt{d_k}$.

### What the hidden checks test

Inputs are random and hidden; the checks are:

1. **The worked example** of the question page (3 tokens, $d_k = 4$), to within 0.001.
2. **Shapes**: $n \ne m$, $d_v \ne d_k$, a single query, 2-D and 4-D inputs, broadcasting of batch
   dimensions and of the mask. The output shape must be exact and the values right.
3. **The scale**: random unit-variance Q, K at $d_k$ = 4, 16, 64, 128 and 256, compared with the
   reference within a relative tolerance of 1e-4 and an absolute tolerance of 1e-5.
4. **Saturation**: at $d_k = 512$, the attention weights (your output with `V` = identity) must
   keep the expected spread: mean top weight and mean row entropy close to correctly scaled
   attention's. The message shows both numbers.
5. **Stability**: scores of magnitude 1e3 and 1e4 must give finite, correct outputs; float32
   inputs must give finite outputs within float32 precision.
6. **Normalisation**: the weights are non-negative and each row sums to 1.
7. **Masking**: masked keys get zero weight, including a mask broadcast over 4-D inputs.
8. **No mutation**: your function must not change its arguments in place.

NaN or infinity in an output, or a result that is not a numeric array, fails the check.
Use numpy (and `math`); the code runs in a sandbox with no files or network.
"""

ATTENTION_STARTER = '''import numpy as np


def attention(Q, K, V, mask=None):
    """Scaled dot-product attention.

    Q: (..., n, d_k), K: (..., m, d_k), V: (..., m, d_v).
    mask: None or bool, broadcastable to (..., n, m); True = may attend.
    Returns (..., n, d_v).
    """
    raise NotImplementedError("write attention here")
'''

MHA_STATEMENT = r"""
Write `multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None)` in numpy.

### Contract

- `X` has shape `(..., n, d_model)` (leading batch dimensions, possibly none); `W_q`, `W_k`,
  `W_v` and `W_o` each have shape `(d_model, d_model)`; `n_heads` is an int that divides
  `d_model`, and $d_{head} = d_{model} / n_{heads}$.
- Compute $XW_q$, $XW_k$, $XW_v$. **Head $h$ uses columns $h \cdot d_{head}$ to
  $(h+1) \cdot d_{head} - 1$** of each.
- Each head is scaled dot-product attention over its own columns: scores divided by
  $\sqrt{d_{head}}$, softmax over the keys, times the head's values.
- Concatenate the heads' outputs in order (head 0 first) along the last axis and multiply by `W_o`.
- `mask` is `None` or a boolean array broadcastable to `(..., n, n)`, **True where a query may
  attend to a key**; the same mask applies to every head. Every query has an allowed key.
- Return a float array of shape `(..., n, d_model)`; leave the inputs unchanged.

### What the hidden checks test

1. **Values**: random X and weights (variance $1/d_{model}$) for several `(d_model, n_heads)`,
   compared with the reference (relative tolerance 1e-4, absolute 1e-5).
2. **Head width**: $d_{model} = 512$ with 8 heads, where the number under the root matters.
3. **Shapes**: 2-D, 3-D and 4-D `X`; a causal mask `(n, n)` and a key-padding mask
   `(batch, 1, n)`. The output shape must be exact and the values right.
4. **Stability**: per-head scores of magnitude 1e3 and 1e4, and float32 inputs.
5. **No mutation** of any argument.

NaN or infinity in an output, or a result that is not a numeric array, fails the check.
"""

MHA_STARTER = '''import numpy as np


def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    """Multi-head attention.

    X: (..., n, d_model); each W: (d_model, d_model); d_head = d_model // n_heads.
    Head h uses columns h*d_head ... (h+1)*d_head - 1 of X @ W_q, X @ W_k, X @ W_v.
    mask: None or bool, broadcastable to (..., n, n); True = may attend.
    Returns (..., n, d_model).
    """
    raise NotImplementedError("write multi_head_attention here")
'''

SOFTMAX_STATEMENT = r"""
Write `softmax(x, axis=-1)` in numpy:
$\operatorname{softmax}(x)_i = e^{x_i} / \sum_j e^{x_j}$ along `axis`.

### Contract

- `x` is a float array of any shape (1-D or more); `axis` is an int, possibly negative.
- Return an array of the same shape as `x`: non-negative values that sum to 1 along `axis`.
- It must work for any finite input, including entries of magnitude 1e3 to 1e4, where a
  naive `exp` overflows. Leave `x` unchanged.

### What the hidden checks test

1. **Values** with the default axis, for 1-D, 2-D and 3-D inputs (relative tolerance 1e-4,
   absolute 1e-5).
2. **The axis argument**: `axis` = 0, 1 and a negative axis on 2-D and 3-D inputs.
3. **Stability**: inputs of magnitude 1e3 and 1e4 must give finite, correct outputs; float32
   inputs too.
4. **Normalisation**: outputs are non-negative and sum to 1 along the axis.
5. **No mutation** of `x`.

NaN or infinity in an output, or a result that is not a numeric array, fails the check.
"""

SOFTMAX_STARTER = '''import numpy as np


def softmax(x, axis=-1):
    """Softmax of x along axis; same shape as x, sums to 1 along axis."""
    raise NotImplementedError("write softmax here")
'''


BACKWARD_STATEMENT = r"""
Write `softmax_backward(p, g)` in numpy: the backward pass of a softmax taken along the last
axis. Given its output $p = \operatorname{softmax}(s)$ and the upstream gradient
$g = \partial L / \partial p$, return the gradient with respect to the scores,

$$\frac{\partial L}{\partial s} = J^\top g = p \odot \Big(g - \sum_j g_j\, p_j\Big),
\qquad J_{ij} = \frac{\partial p_i}{\partial s_j} = p_i\,(\delta_{ij} - p_j).$$

The sum runs over the last axis and is kept for broadcasting:
`p * (g - np.sum(g * p, axis=-1, keepdims=True))`. You may build the Jacobian instead; each
row's $J$ is symmetric, so $J^\top g = J g$.

### Contract

- `p` is a float64 array of shape `(..., n)`: any number of leading batch axes (none
  included), non-negative, each slice along the last axis summing to 1. It may be saturated:
  entries of exactly 0 and 1, or as small as 1e-30.
- `g` is a float array of the same shape.
- Return a float array of that shape. Leave `p` and `g` unchanged.
- Return the gradient as it is, however small: a saturated softmax passes almost no gradient
  back (the explainer's Jacobian figure), and that is what the function must show. Do not clip
  `p`, add an epsilon, or set small values to 0.

### What the hidden checks test

1. **Values**: 1-D, 2-D (square and not) and 3-D inputs, within a relative tolerance of 1e-6
   and an absolute tolerance of 1e-9 (float64 arithmetic).
2. **Batch axes**: one to three leading batch axes.
3. **The vanishing gradient**: p from scores of standard deviation 16, 32 and 64; every entry
   must match the reference's to a relative 1e-6, down to 1e-300 (a row's largest weight may
   differ by the sum of the others' entries, which float64 cannot resolve next to 1).
4. **Stability**: p saturated by scores of magnitude 1e3 and 1e4 (exact zeros and ones) must give
   finite, correct gradients; float32 inputs too.
5. **No mutation** of `p` or `g`.

NaN or infinity in an output, or a result that is not a numeric array, fails the check.
"""

BACKWARD_STARTER = '''import numpy as np


def softmax_backward(p, g):
    """Gradient of softmax (last axis) with respect to its scores.

    p: (..., n), the softmax's output (each row sums to 1).
    g: (..., n), the gradient of the loss with respect to p.
    Returns (..., n).
    """
    raise NotImplementedError("write softmax_backward here")
'''

ATTENTION_BACKWARD_STATEMENT = r"""
An L3 (senior) exercise. Write `attention_backward(Q, K, V, dO, mask=None)` in numpy: the
backward pass of scaled dot-product attention. The forward pass is

$$S = \frac{QK^\top}{\sqrt{d_k}}, \qquad P = \operatorname{softmax}(S), \qquad O = PV,$$

with $S$ set to $-\infty$ where the mask is False and the softmax over the last axis (the keys).
Given $dO = \partial L / \partial O$, return $(dQ, dK, dV)$, the gradients of
$L = \sum O \odot dO$ with respect to Q, K and V:

$$dV = P^\top dO, \quad dP = dO\, V^\top, \quad
dS = P \odot \Big(dP - \sum_j dP_{\cdot j} P_{\cdot j}\Big), \quad
dQ = \frac{dS\, K}{\sqrt{d_k}}, \quad dK = \frac{dS^\top Q}{\sqrt{d_k}}.$$

The middle step is the softmax backward of the previous exercise; the transposes act on the last
two axes only (`np.swapaxes(a, -1, -2)`).

### Contract

- `Q` has shape `(..., n_q, d_k)`, `K` `(..., n_k, d_k)`, `V` `(..., n_k, d_v)` and `dO`
  `(..., n_q, d_v)`: any number of leading batch axes (none included), the same on all four.
- `mask` is None or a boolean array that broadcasts to `(..., n_q, n_k)`, True where a query
  may attend to a key; every query may attend to at least one key. No gradient flows into a
  masked score.
- Return the tuple `(dQ, dK, dV)`, each with its input's shape and a float dtype. Leave the
  inputs unchanged.
- Return the gradients as they are, however small: where the scores are large the softmax
  saturates and the gradient into Q and K vanishes. Do not clip P, add an epsilon or
  renormalise.

The grader reads the tuple as numpy does, one array of shape `(3, ..., n, d)`, so its hidden
inputs have as many queries as keys and d_k = d_v (your function must still be right for any
shapes).

### What the hidden checks test

1. **Finite differences**: small float64 inputs (a matrix, a batched stack, a causal mask);
   each gradient against central differences of $\sum O \odot dO$, computed from the forward
   pass alone, to a relative 1e-5 and an absolute 1e-7.
2. **Batch axes**: none to two leading batch axes, up to 9 tokens, against the reference within
   a relative tolerance of 1e-6 and an absolute one of 1e-9 (float64 arithmetic).
3. **The mask**: a random mask, a causal mask shared by a batch and a key-padding mask of shape
   `(n,)`, to the same tolerances.
4. **The vanishing gradient**: Q and K multiplied by 8 and 16 (scores of standard deviation
   64 and 256); dQ and dK must match the reference's to 1e-10 per unit of the largest entry of K,
   dV to a relative 1e-6.
5. **Stability**: scores of magnitude 1e3 and 1e4 must give finite, correct gradients; float32
   inputs too.
6. **No mutation** of the inputs.

NaN or infinity in a gradient, or a result that is not three arrays, fails the check.
"""

ATTENTION_BACKWARD_STARTER = '''import numpy as np


def attention_backward(Q, K, V, dO, mask=None):
    """Gradients of sum(O * dO), O = softmax(Q K^T / sqrt(d_k), masked) V.

    Q: (..., n_q, d_k), K: (..., n_k, d_k), V: (..., n_k, d_v), dO: (..., n_q, d_v).
    mask: None, or booleans broadcastable to (..., n_q, n_k); True = may attend.
    Returns (dQ, dK, dV), each of its input's shape.
    """
    raise NotImplementedError("write attention_backward here")
'''

DEMO_STATEMENT = r"""
The question asks how you would show, in ten minutes, what the division by $\sqrt{d_k}$ does.
Write that demonstration as a function, `scaling_demo(d_k, rng_seed, n=16)`: it draws random
queries and keys, and returns the numbers you would print.

### Contract

1. Make one generator, `rng = np.random.default_rng(rng_seed)`, and draw **Q first, then K**, each
   of shape `(n, d_k)`, from a standard normal: `rng.standard_normal((n, d_k))` (or
   `rng.normal(0, 1, (n, d_k))`, the same numbers). No other draws from `rng` before them.
2. The raw scores are $S = QK^\top$, of shape `(n, n)`; the scaled ones are $S / \sqrt{d_k}$.
3. Return a tuple of four numbers, in this order:
   - the largest raw score, over the whole matrix: `S.max()`;
   - the largest scaled score, over the whole matrix;
   - the largest softmax weight of **row 0** (query 0 over all `n` keys) without the division;
   - the largest softmax weight of row 0 with the division.
4. `d_k` may be as large as 262144: raw scores then reach about 1e3, and `np.exp` of a score
   above about 709 is infinity. Subtract the row's maximum before exponentiating.

With `d_k = 64` and `rng_seed = 0` the answer is about `(20.03, 2.50, 0.871, 0.199)`: the raw scores
are in the tens and the softmax without the division already puts most of its weight on one key.

### What the hidden checks test

1. **The numbers**: head sizes from 1 to 2048, other seeds, the default `n` and other values,
   within a relative tolerance of 1e-6 (float64 arithmetic on the same draws).
2. **The trend**: eight seeds at each of d_k = 4, 16, 64, 256, 1024 and 4096 (n = 16). Every
   number must be right first; then, per head size, the mean largest raw score divided by
   $\sqrt{d_k}$ and the mean largest scaled score must both lie between 1.5 and 5 (the raw
   spread grows like $\sqrt{d_k}$, the scaled one stays of order one), the mean top weight with
   the division must stay below 0.75, and without it the median must reach 0.95 at
   d_k = 4096.
3. **Overflow**: d_k = 262144 with n = 4 and seeds whose raw scores of row 0 pass 709. The
   four numbers must be finite and right, to the same tolerance.

NaN or infinity among the numbers, or anything other than four numbers, fails the check.
"""

DEMO_STARTER = '''import numpy as np


def scaling_demo(d_k, rng_seed, n=16):
    """The division by sqrt(d_k), shown on random queries and keys.

    Draw Q then K, each (n, d_k), with np.random.default_rng(rng_seed).standard_normal.
    Return (largest raw score, largest scaled score,
            top softmax weight of row 0 without the division, the same with it).
    """
    raise NotImplementedError("write scaling_demo here")
'''


def _check(name: str, weight: float, label: str = "", **params: Any) -> dict[str, Any]:
    return {"name": name, "weight": weight, "label": label, "params": params}


EXERCISES: tuple[dict[str, Any], ...] = (
    {
        "slug": "scaled-dot-product-attention",
        "title": "Scaled dot-product attention",
        "kind": KIND_ATTENTION,
        "entry_point": "attention",
        "statement": ATTENTION_STATEMENT.strip() + "\n",
        "starter_code": ATTENTION_STARTER,
        "reference_solution": REFERENCE_SOURCES[KIND_ATTENTION],
        "order": 1,
        "checks": (
            _check("worked-example", 1),
            _check("shapes", 2),
            _check("scale", 3),
            _check("saturation", 2),
            _check("stability", 1),
            _check("weights-normalized", 1),
            _check("mask", 1),
            _check("no-mutation", 1),
        ),
    },
    {
        "slug": "multi-head-attention",
        "title": "Multi-head attention",
        "kind": KIND_MULTI_HEAD,
        "entry_point": "multi_head_attention",
        "statement": MHA_STATEMENT.strip() + "\n",
        "starter_code": MHA_STARTER,
        "reference_solution": REFERENCE_SOURCES[KIND_MULTI_HEAD],
        "order": 2,
        "checks": (
            _check("mha-values", 3),
            _check("mha-head-width", 3),
            _check("mha-shapes", 2),
            _check("stability", 1),
            _check("no-mutation", 1),
        ),
    },
    {
        "slug": "stable-softmax",
        "title": "A numerically stable softmax",
        "kind": KIND_SOFTMAX,
        "entry_point": "softmax",
        "statement": SOFTMAX_STATEMENT.strip() + "\n",
        "starter_code": SOFTMAX_STARTER,
        "reference_solution": REFERENCE_SOURCES[KIND_SOFTMAX],
        "order": 3,
        "checks": (
            _check("softmax-values", 2),
            _check("softmax-axis", 2),
            _check("stability", 2),
            _check("weights-normalized", 1),
            _check("no-mutation", 1),
        ),
    },
    {
        "slug": "softmax-backward",
        "title": "Softmax backward",
        "kind": KIND_SOFTMAX_BACKWARD,
        "entry_point": "softmax_backward",
        "statement": BACKWARD_STATEMENT.strip() + "\n",
        "starter_code": BACKWARD_STARTER,
        "reference_solution": REFERENCE_SOURCES[KIND_SOFTMAX_BACKWARD],
        "order": 4,
        "checks": (
            _check("backward-values", 3),
            _check("backward-batch-axes", 2),
            _check("backward-vanishing", 2),
            _check("stability", 1),
            _check("no-mutation", 1),
        ),
    },
    {
        "slug": "scaling-demonstration",
        "title": "The ten-minute demonstration",
        "kind": KIND_DEMONSTRATION,
        "entry_point": "scaling_demo",
        "statement": DEMO_STATEMENT.strip() + "\n",
        "starter_code": DEMO_STARTER,
        "reference_solution": REFERENCE_SOURCES[KIND_DEMONSTRATION],
        "order": 5,
        "checks": (
            _check("demo-values", 3),
            _check("demo-trend", 2),
            _check("demo-overflow", 1),
        ),
    },
    {
        "slug": "attention-backward",
        "title": "Attention backward",
        "kind": KIND_ATTENTION_BACKWARD,
        "entry_point": "attention_backward",
        "statement": ATTENTION_BACKWARD_STATEMENT.strip() + "\n",
        "starter_code": ATTENTION_BACKWARD_STARTER,
        "reference_solution": REFERENCE_SOURCES[KIND_ATTENTION_BACKWARD],
        "order": 6,
        "checks": (
            _check("attention-backward-finite-differences", 3),
            _check("attention-backward-values", 2),
            _check("attention-backward-mask", 2),
            _check("attention-backward-vanishing", 2),
            _check("stability", 1),
            _check("no-mutation", 1),
        ),
    },
)

EXERCISE_SLUGS = tuple(e["slug"] for e in EXERCISES)
