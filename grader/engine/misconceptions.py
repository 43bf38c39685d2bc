"""Misconceptions the grader can name: codes, explanations, links, and known wrong code.

No Django imports. Each code has a student-facing explanation and, where the question bank has
a matching wrong answer, the slug of its rebuttal. Each known wrong implementation is a trusted
function of its kind's module (``engine.kinds``) and, through ``source``, a student-style module
for the golden suite and the admin's Validate action.
"""

# ruff: noqa: RUF001, RUF003 - the explanations write × and − as math

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grader.engine.kinds import KIND_NAMES, kind_get, wrong_implementations_all
from grader.engine.kinds.base import BATCH, LARGE, MASK, PLAIN, WrongImplementation
from grader.engine.misconception_figures import misconception_figure

# The question whose wrong answers the diagnoses link to (questions.selectors.MAIN_QUESTION_SLUG).
QUESTION_SLUG = "why-divide-before-softmax"
QUESTION_PATH = "/questions/{question}/"
REBUTTAL_URL = "/questions/{question}/#wrong-{slug}"

# The probe tags (PLAIN, MASK, LARGE, BATCH) and WrongImplementation live with the kinds.

# The link target of each code's explanation (an id on /misconceptions/; stable).
ANCHOR = "misconception-{code}"
# The page that explains every code, one section per anchor (grader:misconception-list).
EXPLANATIONS_PATH = "/misconceptions/"


@dataclass(frozen=True)
class Misconception:
    code: str
    title: str
    explanation: str  # in the student's terms; what to change
    wrong_answer_slug: str | None = None  # the rebuttal on the question page, where one exists

    @property
    def anchor(self) -> str:
        """A stable id for this code's explanation (the explainer's sections link here)."""
        return ANCHOR.format(code=self.code)

    @property
    def rebuttal_url(self) -> str | None:
        if not self.wrong_answer_slug:
            return None
        return REBUTTAL_URL.format(question=QUESTION_SLUG, slug=self.wrong_answer_slug)


_ALL: tuple[Misconception, ...] = (
    Misconception(
        "missing-scale",
        "The scores are not divided by √d_k",
        "Your function applies the softmax to Q·Kᵀ directly. A dot product of d_k unit-variance "
        "terms has variance d_k, so as d_k grows the scores spread out and the softmax puts "
        "nearly all weight on one key (and its gradient vanishes). Divide the scores by √d_k "
        "before the softmax.",
    ),
    Misconception(
        "scale-by-d",
        "The scores are divided by d_k instead of √d_k",
        "Dividing by d_k over-corrects: the scores' variance becomes 1/d_k, they cluster near 0 "
        "and the weights become almost uniform as d_k grows. The standard deviation of the "
        "scores is √d_k, so divide by √d_k.",
        "divide-by-dk",
    ),
    Misconception(
        "scale-values",
        "The values are scaled instead of the scores",
        "Your function scales V (or the output), not the scores. The values are mixed after the "
        "weights are fixed, so scaling them cannot change how peaked the softmax is. Divide "
        "Q·Kᵀ by √d_k before the softmax.",
        "scale-values",
    ),
    Misconception(
        "hardcoded-scale",
        "The scale is a constant, right for one d_k only",
        "Your function divides by a fixed number (such as 8 = √64) instead of √d_k computed from "
        "the inputs. It is right for one head size and wrong for every other; read d_k from "
        "the last dimension of Q (or K).",
    ),
    Misconception(
        "wrong-dimension",
        "The square root is taken of the wrong dimension",
        "Your function divides by the square root of another size (the value dimension d_v or "
        "the sequence length). The score is a dot product over the key dimension, so its spread "
        "grows with d_k: use Q.shape[-1].",
    ),
    Misconception(
        "scale-by-model-width",
        "Multi-head: √d_model is used instead of √d_head",
        "Each head computes its own scores from d_head = d_model / n_heads dimensions, so each "
        "head's scores must be divided by √d_head, not by √d_model.",
    ),
    Misconception(
        "scale-after-softmax",
        "The division comes after the softmax",
        "Dividing the weights after the softmax only shrinks the output (the weights no longer "
        "sum to 1) and does nothing about saturation. The division must act on the scores, "
        "before the softmax.",
    ),
    Misconception(
        "softmax-wrong-axis",
        "The softmax normalises along the wrong axis",
        "The weights of one query over all the keys must sum to 1: the softmax runs along the "
        "last axis of the score matrix (or along `axis`, for softmax itself). Check the axis, "
        "and keep the reduced dimension (keepdims=True) so the division broadcasts correctly.",
    ),
    Misconception(
        "unstable-softmax",
        "The softmax overflows on large scores",
        "exp() of a score above about 709 (88 in float32) is infinity, and inf/inf is NaN. "
        "Subtract each row's maximum before exponentiating: the result is mathematically the "
        "same and never overflows.",
    ),
    Misconception(
        "unnormalized-weights",
        "The weights are not normalised",
        "After exponentiating, each row must be divided by its sum so the weights sum to 1. "
        "The division by √d_k does not do this: it controls the spread of the scores, while "
        "the softmax's own normalisation makes them sum to one.",
        "sums-to-one",
    ),
    Misconception(
        "mask-ignored",
        "The mask is ignored",
        "Your function accepts a mask but gives masked keys weight anyway. Where the mask is "
        "False, set the score to -inf (or a very large negative number) before the softmax, so "
        "that key gets exactly zero weight.",
    ),
    Misconception(
        "mask-inverted",
        "The mask is read the wrong way round",
        "In this exercise (as in PyTorch's scaled_dot_product_attention) True means the query "
        "MAY attend to the key. Your function blocks the keys marked True and keeps the others.",
    ),
    Misconception(
        "mask-wrong-fill",
        "Masked scores are set to 0 or NaN instead of -inf",
        "A masked key must end with weight exactly 0, so its score must become -inf (or a very "
        "large negative number such as -1e9) before the softmax. A score of 0 still gets "
        "weight exp(0 - max), and NaN turns the whole row of weights into NaN. Write "
        "`scores = np.where(mask, scores, -np.inf)`.",
    ),
    Misconception(
        "mask-shape-exact",
        "The mask only works with exactly the scores' shape",
        "Your function handles batch axes and handles a mask, but not a mask that broadcasts: "
        "indexing the scores with it (`scores[~mask] = -np.inf`, `np.putmask`) needs the mask "
        "to have exactly the scores' shape. The contract allows any mask that broadcasts to "
        "them, such as one (n, m) mask shared by every batch element (and every head). Write "
        "`scores = np.where(mask, scores, -np.inf)`, which broadcasts the mask for you.",
    ),
    Misconception(
        "wrong-head-split",
        "Multi-head: the heads take the wrong columns",
        "Head h must use the contiguous columns h·d_head … (h+1)·d_head - 1 of X·W: reshape to "
        "(..., n, n_heads, d_head), not (..., n, d_head, n_heads), then move the head axis "
        "in front of the sequence axis. A plain reshape to (..., n_heads, n, d_head) without "
        "that transpose mixes tokens and columns.",
    ),
    Misconception(
        "weights-transposed",
        "Multi-head: the weight matrices are used transposed (X @ W.T)",
        "PyTorch's nn.Linear stores its weight as (out, in) and computes X @ W.T; here the "
        "weights are given as (d_model, d_model) matrices to multiply on the right: Q = X @ W_q, "
        "K = X @ W_k, V = X @ W_v and the output is concat @ W_o. Drop the .T.",
    ),
    Misconception(
        "missing-projections",
        "Multi-head: X is used as Q, K and V without the projections",
        "Each head attends over projected inputs: compute Q = X @ W_q, K = X @ W_k and "
        "V = X @ W_v first, then split those into heads. Splitting X itself skips the learned "
        "projections, so every head sees raw slices of the input.",
    ),
    Misconception(
        "missing-output-projection",
        "Multi-head: the output projection W_o is missing",
        "After concatenating the heads, multiply by W_o: the heads' outputs are mixed by the "
        "output projection.",
    ),
    Misconception(
        "backward-diagonal-only",
        "Softmax backward: only the diagonal p(1 − p) is used",
        "Your gradient is g * p * (1 - p): each score is taken to move its own weight only. But "
        "every weight shares one denominator, so raising score j also lowers every other "
        "weight: ∂p_i/∂s_j = p_i(δ_ij − p_j), with −p_i·p_j off the diagonal. Summed against g "
        "that gives p * (g - sum(g * p, axis=-1, keepdims=True)): subtract the weighted mean of "
        "g from g, then multiply by p.",
    ),
    Misconception(
        "backward-sign-flipped",
        "Softmax backward: the outer-product term has the wrong sign",
        "Your gradient adds the weighted mean of g where it must subtract it: "
        "p * (g + sum(g * p)). The Jacobian is diag(p) − p pᵀ, so the term from p pᵀ enters "
        "with a minus: p * (g - sum(g * p, axis=-1, keepdims=True)). A quick test: with g all "
        "ones, the right gradient is 0 (adding the same number to every score changes no "
        "weight); yours is 2p.",
    ),
    Misconception(
        "backward-wrong-axis",
        "Softmax backward: the sum runs over the wrong axis",
        "The weighted mean of g, sum(g * p), belongs to one softmax: it runs along the last "
        "axis, the one p is normalised over, and keeps that axis (keepdims=True) so it "
        "broadcasts back along the row. Summing down the columns (axis=0), over the whole "
        "array, or without keepdims (so the sums line up with the wrong axis) mixes the rows "
        "of different softmaxes.",
    ),
    Misconception(
        "backward-jacobian-batch",
        "Softmax backward: a stacked Jacobian is multiplied across the batch",
        "A row's Jacobian J = diag(p) − p pᵀ is symmetric, so Jᵀg and Jg are the same: the "
        "order of the product is not the problem. Stacking one Jacobian per row, (..., n, n), "
        "and then writing J.T reverses every axis, so one row's Jacobian meets another row's "
        "g (and any shape but a square one cannot be multiplied at all). Use "
        "np.einsum('...ij,...j->...i', J, g), or better, skip the n × n matrix: "
        "p * (g - sum(g * p, axis=-1, keepdims=True)).",
    ),
    Misconception(
        "backward-softmax-again",
        "Softmax backward: the softmax is applied to p again",
        "The function is given p, the softmax's output, not the scores. Exponentiating and "
        "normalising p once more gives a much flatter distribution (every p is between 0 and "
        "1, so exp(p) varies by less than a factor e) and the gradient of the wrong softmax. "
        "Use p as it is: p * (g - sum(g * p, axis=-1, keepdims=True)).",
    ),
    Misconception(
        "backward-vanishing-hidden",
        "Softmax backward: the vanishing gradient is clipped or floored",
        "Where the softmax is saturated (one weight ≈ 1, the others ≈ 1e-26), the true "
        "gradient is tiny, and that is the point: a saturated softmax passes almost no "
        "gradient back, which is why the scores are divided by √d_k. Your function changes "
        "those tiny values: p clipped to [1e-7, 1 − 1e-7], an epsilon added, small entries "
        "set to 0, or the arithmetic done in float32, whose relative precision (about 1e-7) "
        "and smallest value (about 1e-38) lose them. Return the gradient as computed in "
        "float64, which holds values down to 1e-308.",
    ),
    Misconception(
        "backward-scale-dropped",
        "Attention backward: the 1/√d_k is left out of dQ and dK",
        "Your forward pass divides the scores by √d_k, but your backward pass forgets it: "
        "S = Q·Kᵀ / √d_k, so by the chain rule every gradient that flows through S into Q or "
        "K is divided by √d_k too. Write dQ = dS @ K / √d_k and "
        "dK = swapaxes(dS, -1, -2) @ Q / √d_k; dV does not pass through S and keeps no scale.",
    ),
    Misconception(
        "backward-softmax-constant",
        "Attention backward: the softmax is treated as a constant",
        "Your function treats the weights P as constants, in one of two ways: no gradient "
        "reaches the scores at all (dQ = dK = 0, as if the weights only scaled V), or "
        "dP = dO·Vᵀ passes straight through to the scores, as if the softmax had no Jacobian "
        "(dS = dP). But P is computed from Q and K, so the gradient flows back through it, "
        "and every weight of a row shares one denominator, so the gradient into the scores is "
        "the softmax backward: dS = P * (dP - sum(dP * P, axis=-1, keepdims=True)), then "
        "dQ = dS·K / √d_k and dK = dSᵀ·Q / √d_k. Without the subtraction your gradient does "
        "not vanish where the softmax saturates, and adding one number to a whole row of "
        "scores (which changes nothing) would seem to matter.",
    ),
    Misconception(
        "backward-transpose",
        "Attention backward: a transpose on the wrong side",
        "Each gradient has its input's shape, and the transposes follow from the forward "
        "pass: O = P·V gives dV = Pᵀ·dO (key by value, so P is transposed) and dP = dO·Vᵀ; "
        "S = Q·Kᵀ / √d_k gives dQ = dS·K / √d_k and dK = dSᵀ·Q / √d_k. With as many queries "
        "as keys, P·dO or dS·Q run and have the right shape but the wrong values (and with "
        "n_q ≠ n_k they fail). Check each product by its indices: dK[j] sums over the queries "
        "i that attended to key j.",
    ),
    Misconception(
        "backward-mask-leak",
        "Attention backward: gradient flows into masked positions",
        "A masked key gets weight exactly 0 in the forward pass, so nothing flows back "
        "through it: its entries of dS must be 0. Your backward uses weights computed "
        "without the mask (a softmax recomputed for the backward pass), so masked scores get "
        "gradient and dQ and dK are wrong. Use the forward's masked P in the backward: "
        "P * (dP - sum(dP * P)) is then 0 wherever P is.",
    ),
    Misconception(
        "rounded-output",
        "The output is rounded",
        "Your values agree with the expected ones only up to a few decimals: every difference "
        "is within half a unit of the last decimal kept, as after `np.round(out, 4)`. Rounding "
        "is for printing; return the full-precision array (the checks allow only about 1e-5).",
    ),
    Misconception(
        "mutates-input",
        "The inputs are changed in place",
        "Your function modifies an array it was given (for example `Q /= ...` or `x -= ...`). "
        "The caller still needs its arrays: write `Q = Q / ...` to make a new one.",
    ),
    Misconception(
        "demo-draws",
        "The demonstration: other random numbers than the contract's",
        "The contract fixes the draws so that anyone can reproduce your numbers: one "
        "np.random.default_rng(seed), Q drawn first and then K, each of shape (n, d_k), from "
        "a standard normal (standard_normal or normal(0, 1)). Drawing K first, using the "
        "legacy np.random.seed with np.random.randn, drawing (d_k, n) and transposing, or "
        "drawing from a uniform gives other scores, and so other numbers. Drawing K first "
        "transposes the scores, so the top weights become those of column 0: the same numbers "
        "as a softmax taken down the columns (axis 0) and read at column 0, which the numbers "
        "alone cannot tell apart; if your draws follow the contract, check the softmax's axis.",
    ),
    Misconception(
        "demo-wrong-row",
        "The demonstration: the numbers of another row",
        "The two largest scores are taken over the whole (n, n) score matrix, and the two top "
        "weights from row 0's softmax only (query 0 over every key). Taking the scores' "
        "maximum of row 0, the weights of the last row, or the largest weight of any row "
        "answers another question.",
    ),
    Misconception(
        "wrong-shape",
        "The output has the wrong shape",
        "The output must have the shape the contract gives (for attention, (..., n, d_v): one "
        "row per query). Returning the weights, a transposed or flattened array, or heads that "
        "were never merged gives the wrong shape.",
    ),
    Misconception(
        "batch-transpose",
        "Batch axes: `.T` reverses every axis, not just the last two",
        "Your function works on 2-D inputs but not with batch axes. For K of shape (b, m, d_k), "
        "K.T (and np.transpose(K)) has shape (d_k, m, b): it reverses every axis, the batch one "
        "too. Transpose only the last two: `np.swapaxes(K, -1, -2)` or `K.swapaxes(-1, -2)`. "
        "Use `@` (np.matmul) rather than np.dot, which does not treat leading axes as a batch.",
    ),
    Misconception(
        "batch-np-dot",
        "Batch axes: np.dot is not batched matrix multiplication",
        "Your function works on 2-D inputs but not with batch axes. On arrays with more than two "
        "dimensions np.dot(a, b) pairs every batch of a with every batch of b (a (b, n, m) and a "
        "(b, m, d_v) give (b, n, b, d_v)). Use `a @ b` (np.matmul), which multiplies matching "
        "batches and broadcasts the rest.",
    ),
    Misconception(
        "batch-fixed-ndim",
        "Batch axes: the code assumes a fixed number of dimensions",
        "The contract allows any number of leading batch axes, none included, but your function "
        "only works for the numbers of dimensions it was written for: unpacking "
        "`n, d = Q.shape`, `transpose(0, 2, 1)`, a positive axis such as `axis=1`, a reshape "
        "with a hand-written batch or head axis, or a max or sum without `keepdims=True` made "
        "to fit a matrix (`np.tile`, `.T`). Count from the end instead: `d_k = Q.shape[-1]`, "
        "`np.swapaxes(K, -1, -2)`, `axis=-1`, `*batch, n, d = X.shape`, and keep the reduced "
        "axis with `keepdims=True`.",
    ),
    Misconception(
        "batch-unsupported",
        "Batch axes are not supported",
        "Your function works on 2-D inputs but fails (or mixes up the batch elements) when the "
        "inputs have leading batch axes. Every operation must act on the last two axes only: "
        "use `@`, `np.swapaxes(K, -1, -2)`, negative axes and `keepdims=True`, and never "
        "reshape the batch axes together with the sequence axis.",
    ),
)

MISCONCEPTIONS: dict[str, Misconception] = {m.code: m for m in _ALL}
CODES: tuple[str, ...] = tuple(m.code for m in _ALL)

UNKNOWN_TITLE = "Unknown misconception"


def misconception_describe(code: str) -> dict[str, Any]:
    """A code with its title (also as ``label``), explanation and links, for a page or the API."""
    m = MISCONCEPTIONS.get(code)
    if m is None:
        return {
            "code": code,
            "title": UNKNOWN_TITLE,
            "label": UNKNOWN_TITLE,
            "explanation": "",
            "rebuttal_url": None,
            "anchor": ANCHOR.format(code=code),
            "explanation_url": None,
        }
    return {
        "code": m.code,
        "title": m.title,
        "label": m.title,  # the API's name for the title (items carry a label)
        "explanation": m.explanation,
        "rebuttal_url": m.rebuttal_url,
        "anchor": m.anchor,
        "explanation_url": f"{EXPLANATIONS_PATH}#{m.anchor}",
    }


# Every kind's known wrong implementations, kind by kind (each kind's module owns its own).
WRONG_IMPLEMENTATIONS: tuple[WrongImplementation, ...] = wrong_implementations_all()


def wrong_implementations_for(kind: str) -> list[WrongImplementation]:
    return list(kind_get(kind).wrong_implementations)


def codes_for(kind: str) -> list[str]:
    """The codes this kind's diagnosis can name, in the catalogue's order."""
    kind_codes = {impl.code for impl in wrong_implementations_for(kind)}
    return [code for code in CODES if code in kind_codes]


def misconceptions_catalogue() -> list[dict[str, Any]]:
    """Every code, described, in the catalogue's order, with the exercise kinds it is named in
    (a rule-based code such as ``batch-unsupported`` has no wrong implementation: all kinds)
    and its computed figure (engine.misconception_figures)."""
    entries = []
    for code in CODES:
        kinds = [kind for kind in KIND_NAMES if code in codes_for(kind)]
        entries.append(
            {
                **misconception_describe(code),
                "kinds": kinds or list(KIND_NAMES),
                "figure": misconception_figure(code),
            }
        )
    return entries


__all__ = [
    "BATCH",
    "CODES",
    "LARGE",
    "MASK",
    "MISCONCEPTIONS",
    "PLAIN",
    "WRONG_IMPLEMENTATIONS",
    "Misconception",
    "WrongImplementation",
    "codes_for",
    "misconception_describe",
    "misconceptions_catalogue",
    "wrong_implementations_for",
]
