"""Assessment by meaning: the key points and wrong answers an instructor wrote as sentences,
read together with the question's labelled example answers, without any pattern.

Each sentence of an answer, and each clause of a sentence that has several, is embedded with a
static sentence-embedding model (`wordllama`, its weights shipped inside its wheel; loaded once
per process, on first use, so nothing that never reads by meaning pays for it) and compared
with *prototypes*:

- for a key point or a wrong answer, its authored sentence and, from every example labelled
  with it, the example's clause nearest that sentence;
- against them, *counter-examples*: every clause of the examples not labelled with it (a wrong
  answer in the same words as a key point is among the key point's counter-examples).

A clause makes the claim when its nearest prototype is nearer than its nearest counter-example
by a margin. The answer's clause that comes nearest decides; the evidence names it and the
prototype it resembled (an example answer, or the authored sentence). Just under the margin
the reader ABSTAINS, which credits nothing. Without any example the authored sentence alone
decides, against a fixed similarity.

Embeddings do not see polarity ("softmax already sums to one, so that is not the reason" sits
next to "it makes the weights sum to one"), so polarity is read explicitly with the stance
machinery of the rules: a sentence can only resemble a prototype that takes the claim the
same way. A sentence that negates, attributes ("someone might say…"), rejects ("rather
than…") or supposes ("if…") a claim, or that the next sentence refutes ("That's wrong."), is
compatible only with prototypes marked the same way, so a denial or refutation of a wrong
answer never reads as asserting it.

Where a claim has patterns, the rules decide and this reader is not consulted: as a second
opinion there it did not beat the rules (docs/judging.md).

Everything is deterministic: the same specs, examples and text give the same verdict.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from questions.assessment.language import (
    _NEGATORS,
    normalise_text,
    split_sentences,
)
from questions.assessment.specs import (
    ASSERTED,
    NEGATED,
    VIA_MEANING,
    Evidence,
    ExampleSpec,
    KeyPointSpec,
    WrongAnswerSpec,
)

if TYPE_CHECKING:
    import numpy as np

# A clause makes a claim when its nearest prototype (among those that take the claim its way)
# is nearer than its nearest counter-example by at least this much cosine similarity. A wrong
# answer needs more: a false rebuttal costs more than a missed one.
KEY_POINT_MARGIN = 0.04
WRONG_ANSWER_MARGIN = 0.16
# Just under the margin the reader abstains rather than saying no.
ABSTAIN_BAND = 0.05
# With no example answers there are no counter-examples: the sentence must be this near the
# authored sentence itself.
STATEMENT_ONLY_FLOOR = 0.78
# A clause no counter-example takes the same way is held against this similarity instead.
NO_COUNTER_EXAMPLE = 0.7

YES = True
NO = False
ABSTAIN = None


# --- Polarity ----------------------------------------------------------------------------------

NEGATION = "negation"
ATTRIBUTION = "attribution"
REJECTION = "rejection"
SUPPOSITION = "supposition"
ANSWERED = "answered"
VERDICT = "verdict"

_IF = re.compile(r"^\s*(?:even )?(?:if|suppose|assuming|maybe if)\b")


def _stance_patterns() -> tuple[Any, ...]:
    # The rules' own stance patterns: one reading of polarity for both.
    from questions.assessment import free_text

    return (
        free_text._ATTRIBUTION,
        free_text._REJECTED_ALTERNATIVE,
        free_text._NEXT_SENTENCE_VERDICT,
        free_text._REFUTING_VERDICT,
    )


def markers(sentence: str, following: Sequence[str] = ()) -> frozenset[str]:
    """How a sentence takes whatever it says: negated, attributed to someone else, rejected,
    supposed, passed a verdict on, or answered by one of the next two sentences."""
    attribution, rejected, next_verdict, verdict = _stance_patterns()
    found = set()
    if _NEGATORS.search(sentence):
        found.add(NEGATION)
    if attribution.search(sentence):
        found.add(ATTRIBUTION)
    if re.search(r"\b(?:instead of|rather than|as opposed to)\b", sentence) or rejected.search(
        sentence
    ):
        found.add(REJECTION)
    if _IF.match(sentence):
        found.add(SUPPOSITION)
    if verdict.search(sentence):
        found.add(VERDICT)
    if any(next_verdict.match(text) for text in following[:2]):
        found.add(ANSWERED)
    return frozenset(found)


# --- The model ---------------------------------------------------------------------------------

_LOCK = threading.Lock()
_MODEL: Any = None


def _model() -> Any:
    """The embedding model, loaded from the files inside its wheel (never downloaded)."""
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            import wordllama

            _MODEL = wordllama.WordLlama.load(
                cache_dir=Path(wordllama.__file__).parent, disable_download=True
            )
        return _MODEL


def embed(texts: Sequence[str]) -> np.ndarray:
    """Unit vectors, one row per text."""
    import numpy as np

    if not texts:
        return np.zeros((0, 256), dtype=np.float32)
    vectors = np.asarray(_model().embed(list(texts)), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


# --- Prototypes --------------------------------------------------------------------------------


def _plain(statement: str) -> str:
    statement = statement.replace("$", "").replace("\\sqrt", "sqrt ").replace("\\", "")
    return normalise_text(re.sub(r"\s+", " ", statement).strip())


@dataclass(frozen=True)
class _Unit:
    """A sentence with the polarity it takes and the authored text it came from."""

    text: str
    rule: str
    markers: frozenset[str]


# Where a sentence's clauses part: one sentence often makes two claims ("same winner, softer
# weights"), and polarity belongs to a clause ("the winner doesn't change, only how much").
_CLAUSE_SPLIT = re.compile(
    r"\s*(?:[,;:()\u2014\u2013]|\s-\s|\b(?:but|because|since|so|although|though|while|"
    r"whereas|hence|thus|however|and so|which means)\b)\s*"
)
# A turn in the sentence: what follows is the speaker's own claim, not the reported one.
_TURN = re.compile(r"^(?:but|however|although|though|whereas|while)$")
# Qualifiers that carry over from a sentence's opening clause to the ones after it, until it
# turns: "some people think that, because the order is kept, it changes nothing".
_CARRIED = frozenset({ATTRIBUTION, SUPPOSITION})
_MIN_CLAUSE_WORDS = 2


def _clauses(sentence: str) -> list[tuple[str, bool]]:
    """The clauses of a sentence, each with whether it opens with a turn ("but …")."""
    parts: list[tuple[str, bool]] = []
    turn = False
    position = 0
    for boundary in _CLAUSE_SPLIT.finditer(sentence):
        piece = sentence[position : boundary.start()].strip()
        if piece:
            parts.append((piece, turn))
        turn = bool(_TURN.match(boundary.group(0).strip()))
        position = boundary.end()
    piece = sentence[position:].strip()
    if piece:
        parts.append((piece, turn))
    return parts


def _units(text: str) -> list[_Unit]:
    """Every sentence of a text and, when it has several, each of its clauses, with the
    polarity each takes."""
    sentences = split_sentences(normalise_text(text))
    units: list[_Unit] = []
    for i, sentence in enumerate(sentences):
        following = sentences[i + 1 : i + 3]
        whole = markers(sentence, following)
        clauses = _clauses(sentence)
        if len(clauses) > 1:
            carried: frozenset[str] = frozenset()
            for clause, turn in clauses:
                if turn:
                    carried = frozenset()
                own = markers(clause, following) | carried
                carried = carried | (own & _CARRIED)
                if len(clause.split()) >= _MIN_CLAUSE_WORDS:
                    units.append(_Unit(clause, text, own))
        units.append(_Unit(sentence, text, whole))
    return units


@dataclass
class _Claim:
    slug: str
    is_point: bool
    positives: list[_Unit]  # the authored sentence first, then the examples' clauses
    pos_vectors: Any
    neg_vectors: Any  # every clause of the examples that do not make the claim
    # The counter-examples by the way they take what they say: a clause is only held against
    # the ones that take it the same way ("it's a myth that it changes nothing" is no
    # counter-example to "it changes nothing"; the polarity already tells them apart).
    neg_by_markers: dict[frozenset[str], Any]


@dataclass
class MeaningIndex:
    """The prototypes of every claim read by meaning, embedded once per set of specs."""

    claims: dict[str, _Claim]


def _build(
    key_points: Sequence[KeyPointSpec],
    wrong_answers: Sequence[WrongAnswerSpec],
    examples: Sequence[ExampleSpec],
) -> MeaningIndex:
    import numpy as np

    from questions.assessment.free_text import is_stuffing

    # A keyword list states nothing, so it teaches nothing either.
    usable = [e for e in examples if e.text.strip() and not is_stuffing(e.text)]
    units = [_units(e.text) for e in usable]
    vectors = [embed([u.text for u in mine]) for mine in units]
    claims: dict[str, _Claim] = {}
    authored = [(kp.slug, kp.label, True) for kp in key_points]
    authored += [(w.slug, w.statement, False) for w in wrong_answers]
    for slug, statement, is_point in authored:
        plain = _plain(statement)
        positives = [_Unit(plain, statement, markers(plain))]
        pos_vectors = [embed([plain])[0]]
        negatives = []
        for example, mine, mine_vectors in zip(usable, units, vectors, strict=True):
            if not mine:
                continue
            says = slug in example.key_points if is_point else example.wrong_answer == slug
            if says:
                # The example's clause nearest the statement carries the claim; its other
                # clauses may carry other claims, so they count neither way.
                best = int((mine_vectors @ pos_vectors[0]).argmax())
                positives.append(mine[best])
                pos_vectors.append(mine_vectors[best])
            else:
                negatives.extend(zip(mine, mine_vectors, strict=True))
        by_markers: dict[frozenset[str], list[Any]] = {}
        for unit, vector in negatives:
            by_markers.setdefault(unit.markers, []).append(vector)
        claims[slug] = _Claim(
            slug,
            is_point,
            positives,
            np.vstack(pos_vectors),
            np.vstack([v for _, v in negatives])
            if negatives
            else np.zeros((0, pos_vectors[0].shape[0])),
            {m: np.vstack(v) for m, v in by_markers.items()},
        )
    return MeaningIndex(claims)


@lru_cache(maxsize=32)
def meaning_index(
    key_points: tuple[KeyPointSpec, ...],
    wrong_answers: tuple[WrongAnswerSpec, ...],
    examples: tuple[ExampleSpec, ...],
) -> MeaningIndex:
    """The index for one set of specs, kept per process: questions change rarely."""
    return _build(key_points, wrong_answers, examples)


# --- Reading an answer -------------------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    """What the meaning reader decided about one claim: YES, NO or ABSTAIN (None), how sure
    (the margin), and the evidence (the answer's sentence and the prototype it resembled)."""

    slug: str
    verdict: bool | None
    margin: float
    evidence: Evidence | None


def _compatible(candidate: frozenset[str], prototype: frozenset[str]) -> bool:
    # Every way the candidate qualifies its claim must be shared by the prototype: "it is not
    # true that X" can only resemble an example that says it in the same way. A negation is
    # the claim's own polarity, so it must agree both ways: "the winner does not change" is
    # not "a different key wins", whatever their words share.
    return candidate <= prototype and (NEGATION in candidate) == (NEGATION in prototype)


def read(
    text: str,
    key_points: Sequence[KeyPointSpec],
    wrong_answers: Sequence[WrongAnswerSpec],
    examples: Sequence[ExampleSpec],
    *,
    slugs: Sequence[str],
) -> dict[str, Reading]:
    """The reading of each claim in `slugs` (key points and wrong answers of these specs)."""
    index = meaning_index(tuple(key_points), tuple(wrong_answers), tuple(examples))
    units = _units(text)
    vectors = embed([u.text for u in units])
    readings: dict[str, Reading] = {}
    for slug in slugs:
        claim = index.claims.get(slug)
        if claim is not None:
            threshold = KEY_POINT_MARGIN if claim.is_point else WRONG_ANSWER_MARGIN
            readings[slug] = _read_claim(claim, units, vectors, threshold)
    return readings


def _read_claim(claim: _Claim, units: list[_Unit], vectors: Any, threshold: float) -> Reading:
    """The claim's verdict from the answer's clause that comes nearest it: how much nearer
    its nearest compatible prototype is than its nearest counter-example."""
    import numpy as np

    best: tuple[float, int, int] | None = None  # margin, unit, prototype
    denied: tuple[float, int, int] | None = None
    for i, unit in enumerate(units):
        sims = claim.pos_vectors @ vectors[i]
        against = _against(claim, unit.markers, vectors[i])
        compatible = [
            j for j, p in enumerate(claim.positives) if _compatible(unit.markers, p.markers)
        ]
        if not compatible:
            # It resembles the claim but takes it another way: a denial, not a claim.
            nearest = int(np.argmax(sims))
            margin = float(sims[nearest]) - against
            if denied is None or margin > denied[0]:
                denied = (margin, i, nearest)
            continue
        nearest = compatible[int(np.argmax(sims[compatible]))]
        margin = float(sims[nearest]) - against
        if best is None or margin > best[0]:
            best = (margin, i, nearest)
    if best is not None and best[0] >= threshold:
        margin, i, j = best
        return Reading(claim.slug, YES, margin, _evidence(claim, units[i], j, ASSERTED))
    if denied is not None and denied[0] >= threshold:
        margin, i, j = denied
        return Reading(claim.slug, NO, margin, _evidence(claim, units[i], j, NEGATED))
    margin = best[0] if best is not None else -1.0
    return Reading(claim.slug, NO if margin < threshold - ABSTAIN_BAND else ABSTAIN, margin, None)


def _against(claim: _Claim, taken: frozenset[str], vector: Any) -> float:
    """The similarity of the nearest counter-example that takes its claim the same way (for a
    key point). A wrong answer is held against every counter-example, whatever its polarity:
    a false rebuttal costs more than a missed one."""
    if not claim.is_point:
        return (
            float((claim.neg_vectors @ vector).max())
            if len(claim.neg_vectors)
            else (STATEMENT_ONLY_FLOOR)
        )
    nearest = [
        float((group @ vector).max())
        for markers_, group in claim.neg_by_markers.items()
        if _compatible(taken, markers_)
    ]
    if not nearest:
        return STATEMENT_ONLY_FLOOR if not claim.neg_by_markers else NO_COUNTER_EXAMPLE
    return max(nearest)


def _evidence(claim: _Claim, unit: _Unit, prototype: int, stance: str) -> Evidence:
    return Evidence(
        claim.slug,
        unit.text,
        stance != ASSERTED,
        unit.text,
        stance,
        rule=claim.positives[prototype].rule,
        via=VIA_MEANING,
    )
