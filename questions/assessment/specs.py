"""What the assessment reads (key points and wrong answers as authored) and what it answers
(evidence, a text assessment, a check's result), with the stances a hit can take."""

from __future__ import annotations

from dataclasses import dataclass, field

# Stances of a hit, as recorded in Evidence.stance.
ASSERTED = "asserted"
NEGATED = "negated"
REFUTED = "refuted"
STUFFING = "stuffing"

# Kinds of rule, as recorded in Evidence.via.
VIA_PATTERN = "pattern"
VIA_CONCEPT = "concept"
VIA_OVERLAP = "overlap"
VIA_MEANING = "meaning"


def via_of(line: str) -> str:
    """The kind of an authored pattern line."""
    return VIA_CONCEPT if line.strip().startswith("~") else VIA_PATTERN


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
    """Why a pattern counted (or did not): the text it matched, whether it was negated (or
    otherwise refuted), the sentence it was found in and how that sentence takes the claim."""

    slug: str
    matched: str
    negated: bool
    sentence: str = ""
    stance: str = ""
    # Which authored rule made the decision, so an author can find a false credit without
    # reading every line: the pattern or concept line verbatim, the statement or example
    # answer it resembled; `via` says which kind of rule that is (one of the VIA_* names).
    rule: str = ""
    via: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "slug": self.slug,
            "matched": self.matched,
            "negated": self.negated,
            "sentence": self.sentence,
            "stance": self.stance,
            "rule": self.rule,
            "via": self.via,
        }


@dataclass(frozen=True)
class TextAssessment:
    key_points: list[str]
    missed: list[str]
    wrong_answer: str | None
    score: float
    evidence: list[Evidence] = field(default_factory=list)
    stuffing: bool = False

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
            "stuffing": self.stuffing,
            "evidence": [e.as_dict() for e in self.evidence],
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


@dataclass(frozen=True)
class ExampleSpec:
    """A labelled example answer as the assessor reads it: what the answer says, by slug
    (the key points it makes, the wrong answer it asserts or "")."""

    text: str
    key_points: tuple[str, ...] = ()
    wrong_answer: str = ""
