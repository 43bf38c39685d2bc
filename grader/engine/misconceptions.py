"""Misconceptions the grader can name: codes, explanations, links, and known wrong code.

No Django imports. Each code has a student-facing explanation and, where the question bank has
a matching wrong answer, the slug of its rebuttal. Each known wrong implementation is a trusted
function (``engine.wrong_implementations``) and, through ``source``, a student-style module for
the golden suite and the admin's Validate action.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from grader.engine import reference
from grader.engine import wrong_implementations as w

# The question whose wrong answers the diagnoses link to (questions.selectors.MAIN_QUESTION_SLUG).
QUESTION_SLUG = "why-divide-before-softmax"
QUESTION_PATH = "/questions/{question}/"
REBUTTAL_URL = "/questions/{question}/#wrong-{slug}"

# Probe tags of the diagnostic inputs (engine.diagnosis): which inputs a wrong implementation is
# compared on. "plain": unmasked, unit-variance inputs at several sizes; "mask": a random mask;
# "large": scores of magnitude ~1e3.
PLAIN = "plain"
MASK = "mask"
LARGE = "large"


@dataclass(frozen=True)
class Misconception:
    code: str
    title: str
    explanation: str  # in the student's terms; what to change
    wrong_answer_slug: str | None = None  # the rebuttal on the question page, where one exists

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
        "wrong-head-split",
        "Multi-head: the heads take the wrong columns",
        "Head h must use the contiguous columns h·d_head … (h+1)·d_head - 1 of X·W: reshape to "
        "(..., n, n_heads, d_head), not (..., n, d_head, n_heads), then move the head axis "
        "in front of the sequence axis.",
    ),
    Misconception(
        "missing-output-projection",
        "Multi-head: the output projection W_o is missing",
        "After concatenating the heads, multiply by W_o: the heads' outputs are mixed by the "
        "output projection.",
    ),
    Misconception(
        "mutates-input",
        "The inputs are changed in place",
        "Your function modifies an array it was given (for example `Q /= ...` or `x -= ...`). "
        "The caller still needs its arrays: write `Q = Q / ...` to make a new one.",
    ),
    Misconception(
        "wrong-shape",
        "The output has the wrong shape",
        "The output must have the shape the contract gives (for attention, (..., n, d_v): one "
        "row per query). Returning the weights, a transposed or flattened array, or heads that "
        "were never merged gives the wrong shape.",
    ),
)

MISCONCEPTIONS: dict[str, Misconception] = {m.code: m for m in _ALL}
CODES: tuple[str, ...] = tuple(m.code for m in _ALL)

UNKNOWN_TITLE = "Unknown misconception"


def misconception_describe(code: str) -> dict[str, Any]:
    """A code with its title, explanation and rebuttal link, ready for a page or the API."""
    m = MISCONCEPTIONS.get(code)
    if m is None:
        return {"code": code, "title": UNKNOWN_TITLE, "explanation": "", "rebuttal_url": None}
    return {
        "code": m.code,
        "title": m.title,
        "explanation": m.explanation,
        "rebuttal_url": m.rebuttal_url,
    }


@dataclass(frozen=True)
class WrongImplementation:
    """A known wrong implementation of an exercise kind, typical of one misconception."""

    code: str
    kind: str
    func: Callable[..., Any]
    # The diagnostic inputs it is compared on (see the tags above).
    tags: frozenset[str] = field(default_factory=lambda: frozenset({PLAIN}))

    @property
    def name(self) -> str:
        return self.func.__name__

    def source(self, entry_point: str) -> str:
        """The function as a student's module, defining ``entry_point``."""
        body = textwrap.dedent(inspect.getsource(self.func))
        body = body.replace(f"def {self.func.__name__}(", f"def {entry_point}(", 1)
        return f"import math\n\nimport numpy as np\n\n\n{body}"


_A, _M, _S = reference.KIND_ATTENTION, reference.KIND_MULTI_HEAD, reference.KIND_SOFTMAX
_MASKED = frozenset({MASK})
_LARGE = frozenset({LARGE})

WRONG_IMPLEMENTATIONS: tuple[WrongImplementation, ...] = (
    # attention
    WrongImplementation("missing-scale", _A, w.attention_missing_scale),
    WrongImplementation("scale-by-d", _A, w.attention_scale_by_d),
    WrongImplementation("scale-values", _A, w.attention_scale_values),
    WrongImplementation("hardcoded-scale", _A, w.attention_divide_by_8),
    WrongImplementation("hardcoded-scale", _A, w.attention_divide_by_2),
    WrongImplementation("hardcoded-scale", _A, w.attention_divide_by_4),
    WrongImplementation("hardcoded-scale", _A, w.attention_divide_by_16),
    WrongImplementation("wrong-dimension", _A, w.attention_sqrt_d_v),
    WrongImplementation("wrong-dimension", _A, w.attention_sqrt_seq_len),
    WrongImplementation("wrong-dimension", _A, w.attention_sqrt_n_queries),
    WrongImplementation("scale-after-softmax", _A, w.attention_scale_after_softmax),
    WrongImplementation("softmax-wrong-axis", _A, w.attention_softmax_over_queries),
    WrongImplementation("unstable-softmax", _A, w.attention_naive_softmax, _LARGE),
    WrongImplementation("unnormalized-weights", _A, w.attention_unnormalized),
    WrongImplementation("mask-ignored", _A, w.attention_mask_ignored, _MASKED),
    WrongImplementation("mask-inverted", _A, w.attention_mask_inverted, _MASKED),
    WrongImplementation("mutates-input", _A, w.attention_scales_q_in_place),
    WrongImplementation("wrong-shape", _A, w.attention_returns_weights),
    # multi-head attention
    WrongImplementation("missing-scale", _M, w.mha_missing_scale),
    WrongImplementation("scale-by-d", _M, w.mha_scale_by_d_head),
    WrongImplementation("scale-by-model-width", _M, w.mha_scale_by_model_width),
    WrongImplementation("hardcoded-scale", _M, w.mha_divide_by_8),
    WrongImplementation("wrong-head-split", _M, w.mha_interleaved_heads),
    WrongImplementation("missing-output-projection", _M, w.mha_missing_output_projection),
    WrongImplementation("mask-ignored", _M, w.mha_mask_ignored, _MASKED),
    WrongImplementation("unstable-softmax", _M, w.mha_naive_softmax, _LARGE),
    WrongImplementation("mutates-input", _M, w.mha_scales_weights_in_place),
    WrongImplementation("wrong-shape", _M, w.mha_returns_heads),
    WrongImplementation("scale-values", _M, w.mha_scale_values),
    WrongImplementation("softmax-wrong-axis", _M, w.mha_softmax_over_queries),
    WrongImplementation("unnormalized-weights", _M, w.mha_unnormalized),
    # softmax
    WrongImplementation("unstable-softmax", _S, w.softmax_naive, _LARGE),
    WrongImplementation("softmax-wrong-axis", _S, w.softmax_ignores_axis),
    WrongImplementation("softmax-wrong-axis", _S, w.softmax_whole_array),
    WrongImplementation("softmax-wrong-axis", _S, w.softmax_missing_keepdims),
    WrongImplementation("unnormalized-weights", _S, w.softmax_unnormalized),
    WrongImplementation("mutates-input", _S, w.softmax_shifts_in_place),
    WrongImplementation("wrong-shape", _S, w.softmax_flattened),
)


def wrong_implementations_for(kind: str) -> list[WrongImplementation]:
    return [impl for impl in WRONG_IMPLEMENTATIONS if impl.kind == kind]


def codes_for(kind: str) -> list[str]:
    """The codes this kind's diagnosis can name, in the catalogue's order."""
    kind_codes = {impl.code for impl in wrong_implementations_for(kind)}
    return [code for code in CODES if code in kind_codes]
