"""Short answers with one right value: a number within a tolerance, a shape, a choice."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence

from questions.assessment.language import normalise_text
from questions.assessment.specs import CheckResult

# User-facing messages. Tests assert on these constants, so change them here only.
NUMBER_NOT_FOUND = "No number found in your answer. Write the value, for example 64."
NUMBER_CORRECT = "Correct."
NUMBER_WRONG = "Not quite: {got:g} is not within {tolerance:g} of the expected value."
# With a tolerance of 0 "within 0" reads oddly: say what kind of value is expected instead.
NUMBER_WRONG_INTEGER = "Not quite: the expected value is an integer, and {got:g} is not it."
NUMBER_WRONG_EXACT = "Not quite: {got:g} is not the expected value."
SHAPE_NOT_FOUND = "No shape found in your answer. Write it like (n, n)."
SHAPE_CORRECT = "Correct shape."
SHAPE_WRONG = "Not quite: {got} is not the expected shape."
CHOICE_MISSING = "Pick one of the options."
CHOICE_CORRECT = "Correct choice."
CHOICE_WRONG = "Not this one."
# A wrong value the author foresaw names the confusion, in the author's words ("why"): e.g.
# "Not quite: 512 is d_model, the model width; the question asks for d_head, ...".
NUMBER_KNOWN_WRONG = "Not quite: {got:g} is {why}"
SHAPE_KNOWN_WRONG = "Not quite: {got} is {why}"
CHOICE_KNOWN_WRONG = "Not this one: {why}"


_NUMBER = re.compile(r"[-+]?(?:\d+(?:[.,]\d+)?|\.\d+)(?:e[-+]?\d+)?", re.IGNORECASE)


def parse_number(text: str) -> float | None:
    """The first number in the text; "1,5" is read as 1.5, a thousands comma is not expected."""
    match = _NUMBER.search(normalise_text(text))
    if match is None:
        return None
    try:
        value = float(match.group(0).replace(",", "."))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _why(known_wrong: Mapping[str, str] | None, matches: Callable[[str], bool]) -> str:
    """The author's explanation of the first known wrong answer `matches` accepts."""
    for answer, why in (known_wrong or {}).items():
        if why and matches(answer):
            return why.strip()
    return ""


def check_number(
    text: str,
    expected: float,
    tolerance: float = 0.0,
    known_wrong: Mapping[str, str] | None = None,
) -> CheckResult:
    """`known_wrong` maps a wrong value the author foresaw ("512") to what it is and why it
    is not the answer; a value within the tolerance of one gets that explanation."""
    got = parse_number(text)
    if got is None:
        return CheckResult("number", False, NUMBER_NOT_FOUND)

    def near(value: float | None) -> bool:
        # A tiny epsilon so a tolerance of 0.001 accepts 0.8137 vs 0.814 as the author meant.
        return value is not None and abs(got - value) <= abs(tolerance) + 1e-9

    ok = near(expected)
    why = "" if ok else _why(known_wrong, lambda answer: near(parse_number(answer)))
    if ok:
        message = NUMBER_CORRECT
    elif why:
        message = NUMBER_KNOWN_WRONG.format(got=got, why=why)
    elif tolerance:
        message = NUMBER_WRONG.format(got=got, tolerance=abs(tolerance))
    elif float(expected).is_integer():
        message = NUMBER_WRONG_INTEGER.format(got=got)
    else:
        message = NUMBER_WRONG_EXACT.format(got=got)
    return CheckResult("number", ok, message, parsed=f"{got:g}")


_SHAPE_BRACKETED = re.compile(r"[(\[]\s*([a-z0-9_]+(?:\s*,\s*[a-z0-9_]+)*)\s*,?\s*[)\]]")
_SHAPE_TIMES = re.compile(r"\b([a-z0-9_]+(?:\s*(?:x|\u00d7|\*|by)\s*[a-z0-9_]+)+)\b")


def normalise_shape(text: str) -> str | None:
    """A canonical "(a, b)" for "(n,n)", "( n , n )", "[n, n]", "n x n", "n by n" and the
    multiplication sign."""
    lowered = text.lower()
    match = _SHAPE_BRACKETED.search(lowered)
    if match:
        dims = [d.strip() for d in match.group(1).split(",")]
    else:
        match = _SHAPE_TIMES.search(lowered)
        if not match:
            return None
        dims = [d.strip() for d in re.split(r"\s*(?:x|\u00d7|\*|by)\s*", match.group(1))]
    dims = [d for d in dims if d]
    if not dims:
        return None
    if len(dims) == 1:
        return f"({dims[0]},)"
    return "(" + ", ".join(dims) + ")"


def check_shape(
    text: str, expected: str, known_wrong: Mapping[str, str] | None = None
) -> CheckResult:
    got = normalise_shape(text)
    want = normalise_shape(expected)
    if got is None:
        return CheckResult("shape", False, SHAPE_NOT_FOUND)
    ok = got == want
    if ok:
        return CheckResult("shape", True, SHAPE_CORRECT, got)
    why = _why(known_wrong, lambda answer: normalise_shape(answer) == got)
    message = SHAPE_KNOWN_WRONG.format(got=got, why=why) if why else SHAPE_WRONG.format(got=got)
    return CheckResult("shape", False, message, got)


def _plain(text: str) -> str:
    return " ".join(text.split()).casefold()


def check_choice(
    text: str,
    choices: Sequence[str],
    correct: str,
    known_wrong: Mapping[str, str] | None = None,
) -> CheckResult:
    """`known_wrong` maps a wrong choice to why it is wrong, shown when it is picked."""
    picked = _plain(text)
    options = {_plain(c): c for c in choices}
    if picked not in options:
        return CheckResult("choice", False, CHOICE_MISSING)
    ok = picked == _plain(correct)
    if ok:
        return CheckResult("choice", True, CHOICE_CORRECT, options[picked])
    why = _why(known_wrong, lambda answer: _plain(answer) == picked)
    message = CHOICE_KNOWN_WRONG.format(why=why) if why else CHOICE_WRONG
    return CheckResult("choice", False, message, options[picked])
