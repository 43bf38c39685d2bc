"""Every student-facing message of the checks, as constants and templates that tests assert on.

A message says what was tested (the contract) and how the output was wrong; it never shows a
hidden input or an expected value, except the public worked example and the summary numbers of
the saturation check (mean top weight and entropy), which are the point of that check.
"""

import re

PASSED = "Passed."

# Running the function. {error} is the exception line first, then where it was raised in your
# code (your own lines only); shown in monospace on the page.
CALL_ERROR = "On {what}, your function raised an error:\n{error}"
# One frame of a traceback, innermost first.
TRACEBACK_AT = "  at line {line}, in {func}: {code}"
TRACEBACK_CALLED_FROM = "  called from line {line}, in {func}: {code}"
NOT_RUN = "On {what}, your function did not finish: {reason}"
NOT_RUN_DEFAULT = "the run stopped before this call."
NOT_NUMERIC = "On {what}, your function returned {got}, not a numeric array."
NOT_FINITE = "On {what}, your output contains NaN or infinity."
SHAPE = "On {what}, the output must have shape {expected}; yours has shape {got}."
ROUNDED_FIX = "Return the values unrounded."
ROUNDED = (
    "On {what}, your output agrees with the expected values only to {decimals} decimals: every "
    "difference (largest {diff:.3g}) is within half a unit of decimal {decimals}, as after "
    "np.round(..., {decimals}). " + ROUNDED_FIX
)
VALUES = (
    "On {what}, your output differs from the expected values: the largest difference is "
    "{diff:.3g} (allowed: {atol:g} + {rtol:g} * |expected|)."
)

# Worked example (seed 002: public, so its numbers may be shown). Its sizes come from the
# example's arrays, so the label and every message name the input that was really used.
WORKED_EXAMPLE_WHAT = "the worked example ({n} tokens, d_k = {d_k})"
WORKED_EXAMPLE = "On {what}, the output must be {expected} to within {atol:g}; yours is {got}."

# Stability: one probe per large magnitude (float64), and, with `float32`, one float32 probe of
# scores of magnitude about FLOAT32_SCORE_SIZE. The label names both, as the messages do.
STABILITY_LABEL = "Large scores (magnitude about {magnitudes})"
STABILITY_LABEL_FLOAT32 = (
    "Large scores (magnitude about {magnitudes}) and float32 inputs (magnitude about {size32:g})"
)

# Saturation: the message reports the student's and the reference's numbers.
SATURATION = (
    "At d_k = {d_k} with unit-variance Q and K, your attention weights have a mean top weight of "
    "{top:.3f} and a mean row entropy of {entropy:.3f} nats; correctly scaled attention keeps "
    "a mean top weight of {ref_top:.3f} and an entropy of {ref_entropy:.3f} nats "
    "(allowed difference: {top_tol:g} and {entropy_tol:g} nats)."
)
SATURATION_PASSED = (
    "At d_k = {d_k}, your attention weights keep their spread: mean top weight {top:.3f} "
    "(expected {ref_top:.3f}), mean row entropy {entropy:.3f} nats (expected {ref_entropy:.3f})."
)

# Normalisation and masking.
NOT_NORMALIZED = (
    "On {what}, the attention weights (your output with V = identity) must be non-negative and "
    "each row must sum to 1; the worst row sums to {worst:.6g}."
)
SOFTMAX_NOT_NORMALIZED = (
    "On {what}, the outputs must be non-negative and sum to 1 along the axis; the worst slice "
    "sums to {worst:.6g}."
)
MASK_LEAK = (
    "On {what}, masked keys (mask False) must get zero weight; your largest weight on a masked "
    "key is {leak:.3g}."
)

# The softmax's backward pass at large scores: the gradient must vanish as the reference's does.
BACKWARD_VANISHING_LABEL = "A saturated softmax's vanishing gradient (scores of std {scales})"
BACKWARD_VANISHING = (
    "On {what}, the gradient must vanish as it really does: an entry whose value is {expected} "
    "came back as {got} (allowed: a relative error of {rtol:g}). A saturated softmax passes "
    "almost no gradient back; do not clip p, add an epsilon, set small values to 0 or compute "
    "in float32."
)

# The ten-minute demonstration's trend across head sizes (checks.demonstration).
DEMO_TREND_LABEL = "The trend across head sizes (d_k = {d_ks})"
DEMO_RAW_SPREAD = (
    "At d_k = {d_k} your mean largest raw score is {raw:.3g}, {ratio:.3g} times √d_k: the raw "
    "scores of unit-variance Q and K have standard deviation √d_k, so their maximum grows like "
    "√d_k."
)
DEMO_SCALED_SPREAD = (
    "At d_k = {d_k} your mean largest scaled score is {scaled:.3g}: divided by √d_k the scores "
    "have standard deviation 1 at every head size, so their maximum stays of order one."
)
DEMO_SCALED_PEAKED = (
    "At d_k = {d_k} your mean top weight with the division is {top:.3g}: scaled scores of "
    "standard deviation 1 spread the weight over several keys."
)
DEMO_NOT_SATURATED = (
    "At d_k = {d_k} your median top weight without the division is {top:.3g}: raw scores that "
    "far apart put almost all the weight on one key, so it should be close to 1."
)

# Inputs.
MUTATED = "Your function changed its input {arg} in place; it must leave its inputs unchanged."
MUTATED_SHAPE = "Your function changed the shape of its input {arg}."
# The function raised on the call that would show a mutation: nothing can be said about it.
MUTATION_NOT_RUN = (
    "This check could not run: on {what}, your function raised an error, so whether it "
    "changes its inputs could not be tested. Fix the error first:\n{error}"
)

# The check could not be set up (our fault, e.g. bad parameters saved in the admin).
NO_PROBES = "This check has no inputs with its current parameters."


# Shown as text, always escaped: math is written with Unicode subscripts, never HTML. Only the
# sizes with a Unicode subscript letter; d_head and d_model stay as they are.
_MATH_NAMES = ((re.compile(r"\bd_k\b"), "dₖ"), (re.compile(r"\bd_v\b"), "dᵥ"))


def as_math(text: str) -> str:
    """'At √d_k = 8' → 'At √dₖ = 8': a message's sizes as math, for display (stored as written).

    Only the first line: what follows it (CALL_ERROR's exception and traceback) quotes the
    student's code, where `d_k` is a Python name and must stay as typed.
    """
    head, newline, rest = text.partition("\n")
    for pattern, name in _MATH_NAMES:
        head = pattern.sub(name, head)
    return head + newline + rest


# The attention backward: the three gradients come back as one array (3, ..., n, d).
GRADIENT_NAMES = ("dQ", "dK", "dV")
ATTN_BACKWARD_SHAPE = (
    "On {what}, your function must return the tuple (dQ, dK, dV), each of shape {shape} "
    "(its input's); numpy read what it returned as an array of shape {got}."
)
ATTN_BACKWARD_RAGGED = (
    "On {what}, the three arrays your function returned do not share one shape, though Q, K "
    "and V do here: each gradient must have its input's shape, {shape}."
)
ATTN_BACKWARD_VALUES = (
    "On {what}, your {grad} differs from {against}: the largest difference is {diff:.3g} "
    "(allowed: {atol:g} + {rtol:g} * |expected|)."
)
ATTN_BACKWARD_AGAINST_FD = "the finite differences of sum(O * dO)"
ATTN_BACKWARD_AGAINST_REFERENCE = "the expected gradient"
ATTN_BACKWARD_VANISHING_LABEL = (
    "A saturated softmax's vanishing gradient into Q and K (Q and K times {scales})"
)
ATTN_BACKWARD_VANISHING = (
    "On {what}, the gradient into {grad} must vanish with the saturated softmax, as the "
    "softmax backward's does: its entries are at most {expected:.3g}, yours reach {got:.3g}. "
    "Do not clip P, add an epsilon or renormalise the gradient."
)
