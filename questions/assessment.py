"""Deterministic, explainable assessment of answers. Pure Python: no Django imports.

Everything here is a function of its arguments, so the web, the API and the `assess` command
give the same verdict for the same text, and the tests need no database.

Free text is assessed with key-point patterns (regular expressions written by instructors)
and the nearest wrong answer. A pattern hit only counts when it is not negated: "a larger
learning rate can't recover it" must not be read as the misconception "a larger learning
rate recovers it".
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

# User-facing messages. Tests assert on these constants, so change them here only.
NUMBER_NOT_FOUND = "No number found in your answer. Write the value, for example 64."
NUMBER_CORRECT = "Correct."
NUMBER_WRONG = "Not quite: {got:g} is not within {tolerance:g} of the expected value."
SHAPE_NOT_FOUND = "No shape found in your answer. Write it like (n, n)."
SHAPE_CORRECT = "Correct shape."
SHAPE_WRONG = "Not quite: {got} is not the expected shape."
CHOICE_MISSING = "Pick one of the options."
CHOICE_CORRECT = "Correct choice."
CHOICE_WRONG = "Not this one."
TEXT_PASSED = "You covered the main points."
TEXT_PARTIAL = "Some key points are missing."

# A stated misconception costs this much of the score: interviewers weigh a wrong claim
# against the right ones, but a single slip should not erase everything else.
WRONG_ANSWER_PENALTY = 0.25
# A free-text follow-up counts as answered when at least this share of its key points is there.
TEXT_PASS_SHARE = 0.5
# Without a pattern hit, an answer "resembles" a wrong answer when it contains at least this
# share of the statement's content words (and at least MIN_SHARED_WORDS of them).
RESEMBLANCE_SHARE = 0.75
MIN_SHARED_WORDS = 3

# Words that flip the meaning of what follows them in the same clause. "without" is left
# out on purpose: "without the division the scores grow" asserts that they grow.
_NEGATORS = re.compile(
    r"\b(?:not|no|never|none|nothing|neither|nor|cannot|can't|won't|doesn't|don't|didn't|"
    r"isn't|aren't|wasn't|weren't|shouldn't|wouldn't|couldn't|hardly|barely|fails? to)\b|n't\b"
)
# Negation reaches back at most this many words, and never across a clause boundary.
_NEGATION_WINDOW_WORDS = 4
_NEGATION_AFTER_WORDS = 2
_CLAUSE_BOUNDARY = re.compile(r"[.;:!?,()\n]|\b(?:but|because|since|so|although|though|while)\b")
_WORD = re.compile(r"[a-z0-9_']+")
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "and",
        "or",
        "is",
        "are",
        "be",
        "it",
        "its",
        "it's",
        "this",
        "that",
        "with",
        "as",
        "from",
        "into",
        "than",
        "then",
        "them",
        "they",
        "their",
        "there",
        "these",
        "those",
        "was",
        "were",
        "will",
        "would",
        "can",
        "could",
    ]
)


@dataclass(frozen=True)
class KeyPointSpec:
    slug: str
    label: str
    patterns: tuple[str, ...]


@dataclass(frozen=True)
class WrongAnswerSpec:
    slug: str
    statement: str
    patterns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Evidence:
    """Why a pattern counted (or did not): the text it matched and whether it was negated."""

    slug: str
    matched: str
    negated: bool


@dataclass(frozen=True)
class TextAssessment:
    key_points: list[str]
    missed: list[str]
    wrong_answer: str | None
    score: float
    evidence: list[Evidence] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        """The one-line shape the `assess` command and the API promise."""
        return {
            "key_points": self.key_points,
            "wrong_answer": self.wrong_answer,
            "score": self.score,
        }

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": "text",
            **self.summary(),
            "missed": self.missed,
            "evidence": [
                {"slug": e.slug, "matched": e.matched, "negated": e.negated} for e in self.evidence
            ],
        }


@dataclass(frozen=True)
class CheckResult:
    kind: str
    correct: bool
    message: str
    parsed: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "correct": self.correct,
            "message": self.message,
            "parsed": self.parsed,
        }


def normalise_text(text: str) -> str:
    """Lower-case, straighten quotes and spell out the root sign, so patterns stay simple."""
    text = text.lower()
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u2212", "-")
    text = text.replace("√", " sqrt ")
    # Candidates type LaTeX too: "$\\sqrt{d_k}$" reads as "sqrt d_k" for the patterns.
    text = text.replace("\\sqrt", " sqrt ").replace("$", "")
    text = re.sub(r"[{}]", " ", text)
    text = re.sub(r"\bcan not\b", "cannot", text)
    return re.sub(r"[ \t]+", " ", text)


def _compile(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error:
        # A broken instructor pattern must not take the page down; the model's clean()
        # reports it when it is saved, so this only guards old rows.
        return None


def is_negated(text: str, start: int, end: int, pattern: str = "") -> bool:
    """True when a negator governs text[start:end].

    Looks at the match itself, at up to four words before it and two after it in the same
    clause. When the
    pattern itself spells a negation ("no error"), the author meant it, so only the words
    before the match are checked.
    """
    clause_start = 0
    for boundary in _CLAUSE_BOUNDARY.finditer(text, 0, start):
        clause_start = boundary.end()
    before_words = _WORD.findall(text[clause_start:start])[-_NEGATION_WINDOW_WORDS:]
    if any(_NEGATORS.fullmatch(w) or w.endswith("n't") for w in before_words):
        return True
    if _NEGATORS.search(pattern.lower()):
        return False
    if _NEGATORS.search(text[start:end]):
        return True
    # "scaling the values would not help": a negator just after the claim also flips it.
    boundary = _CLAUSE_BOUNDARY.search(text, end)
    after = text[end : boundary.start() if boundary else len(text)]
    after_words = _WORD.findall(after)[:_NEGATION_AFTER_WORDS]
    return any(_NEGATORS.fullmatch(w) or w.endswith("n't") for w in after_words)


def find_unnegated(text: str, patterns: Iterable[str]) -> tuple[Evidence | None, list[Evidence]]:
    """The first non-negated hit of any pattern, plus every hit seen (for the explanation).

    Hits that overlap a negated hit are negated too: in "not true that a larger learning rate
    recovers it" a shorter pattern matching only "learning rate recovers" is the same denied
    claim, even though the "not" lies outside its own window.
    """
    hits: list[tuple[int, int, str, bool]] = []
    for pattern in patterns:
        compiled = _compile(pattern)
        if compiled is None:
            continue
        for match in compiled.finditer(text):
            if match.end() > match.start():
                negated = is_negated(text, match.start(), match.end(), pattern)
                hits.append((match.start(), match.end(), match.group(0), negated))
    denied = [(start, end) for start, end, _, negated in hits if negated]
    seen: list[Evidence] = []
    first: Evidence | None = None
    for start, end, matched, negated in hits:
        negated = negated or any(start < d_end and d_start < end for d_start, d_end in denied)
        evidence = Evidence(slug="", matched=matched, negated=negated)
        seen.append(evidence)
        if first is None and not negated:
            first = evidence
    return first, seen


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(normalise_text(text)) if w not in _STOPWORDS and len(w) > 2}


def _resemblance(text: str, statement: str) -> float:
    wanted = _content_words(statement)
    if len(wanted) < MIN_SHARED_WORDS:
        return 0.0
    shared = wanted & _content_words(text)
    if len(shared) < MIN_SHARED_WORDS:
        return 0.0
    return len(shared) / len(wanted)


def nearest_wrong_answer(
    text: str, wrong_answers: Sequence[WrongAnswerSpec]
) -> tuple[str | None, list[Evidence]]:
    """The wrong answer the text resembles, or None.

    A non-negated pattern hit wins (first in the given order). Failing that, the statement
    sharing the most content words, if it shares enough. Word overlap cannot tell "recovers"
    from "does not recover", so a text with any negator is never matched by overlap alone:
    a missed diagnosis is cheaper than accusing a correct answer of a misconception.
    """
    normalised = normalise_text(text)
    evidence: list[Evidence] = []
    for wrong in wrong_answers:
        hit, seen = find_unnegated(normalised, wrong.patterns)
        evidence.extend(Evidence(wrong.slug, e.matched, e.negated) for e in seen)
        if hit is not None:
            return wrong.slug, evidence
    if _NEGATORS.search(normalised):
        return None, evidence
    best: tuple[float, str] | None = None
    for wrong in wrong_answers:
        share = _resemblance(normalised, wrong.statement)
        if share >= RESEMBLANCE_SHARE and (best is None or share > best[0]):
            best = (share, wrong.slug)
    return (best[1] if best else None), evidence


def assess_text(
    text: str,
    key_points: Sequence[KeyPointSpec],
    wrong_answers: Sequence[WrongAnswerSpec] = (),
) -> TextAssessment:
    """Key points covered, the wrong answer it resembles, and a score in [0, 1].

    score = covered / total key points, minus WRONG_ANSWER_PENALTY if a wrong answer is
    matched, clamped to [0, 1] and rounded to 2 places so it prints the same everywhere.
    """
    normalised = normalise_text(text)
    covered: list[str] = []
    missed: list[str] = []
    evidence: list[Evidence] = []
    for point in key_points:
        hit, seen = find_unnegated(normalised, point.patterns)
        evidence.extend(Evidence(point.slug, e.matched, e.negated) for e in seen)
        (covered if hit is not None else missed).append(point.slug)
    wrong, wrong_evidence = nearest_wrong_answer(text, wrong_answers)
    evidence.extend(wrong_evidence)
    score = len(covered) / len(key_points) if key_points else 0.0
    if wrong is not None:
        score -= WRONG_ANSWER_PENALTY
    score = round(min(1.0, max(0.0, score)), 2)
    return TextAssessment(
        key_points=covered, missed=missed, wrong_answer=wrong, score=score, evidence=evidence
    )


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


def check_number(text: str, expected: float, tolerance: float = 0.0) -> CheckResult:
    got = parse_number(text)
    if got is None:
        return CheckResult("number", False, NUMBER_NOT_FOUND)
    # A tiny epsilon so a tolerance of 0.001 accepts 0.8137 vs 0.814 as the author meant.
    ok = abs(got - expected) <= abs(tolerance) + 1e-9
    message = NUMBER_CORRECT if ok else NUMBER_WRONG.format(got=got, tolerance=abs(tolerance))
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


def check_shape(text: str, expected: str) -> CheckResult:
    got = normalise_shape(text)
    want = normalise_shape(expected)
    if got is None:
        return CheckResult("shape", False, SHAPE_NOT_FOUND)
    ok = got == want
    return CheckResult("shape", ok, SHAPE_CORRECT if ok else SHAPE_WRONG.format(got=got), got)


def check_choice(text: str, choices: Sequence[str], correct: str) -> CheckResult:
    picked = " ".join(text.split()).casefold()
    options = {" ".join(c.split()).casefold(): c for c in choices}
    if picked not in options:
        return CheckResult("choice", False, CHOICE_MISSING)
    ok = picked == " ".join(correct.split()).casefold()
    return CheckResult("choice", ok, CHOICE_CORRECT if ok else CHOICE_WRONG, options[picked])


def check_text(text: str, key_points: Sequence[KeyPointSpec]) -> tuple[CheckResult, TextAssessment]:
    assessment = assess_text(text, key_points)
    ok = bool(key_points) and len(assessment.key_points) / len(key_points) >= TEXT_PASS_SHARE
    return CheckResult("text", ok, TEXT_PASSED if ok else TEXT_PARTIAL), assessment
