"""Where a spec's pattern lines hit a sentence: regular expressions through
questions.assessment.patterns, and `~` concept lines matched on stems within a window."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from questions.assessment.language import (
    _NEGATION_WINDOW_WORDS,
    _is_negator,
    _Sentence,
    _spells_negation,
    is_negated,
    stem,
)
from questions.assessment.patterns import _compile, _pattern_finditer

# The words of a concept line must all fall within this many words of each other: a
# sentence-wide bag of words would let a long answer match anything.
CONCEPT_WINDOW_WORDS = 12


@dataclass(frozen=True)
class _Concept:
    """A parsed `~` line: every term must occur; a term is a set of alternatives, each a
    sequence of stems (a phrase), the last of which may be a prefix."""

    terms: tuple[tuple[tuple[tuple[str, bool], ...], ...], ...]
    # Whether the author wrote a negator into the concept ("~ no error"): then a negator in
    # the text is the claim, not its denial.
    negative: bool


@lru_cache(maxsize=4096)
def _parse_concept(line: str) -> _Concept | None:
    body = line.strip()[1:].strip().lower()
    if not body:
        return None
    terms = []
    negative = False
    for raw_term in body.split():
        alternatives = []
        for alt in raw_term.split("|"):
            words = []
            for part in alt.split("_"):
                if not part:
                    continue
                prefix = part.endswith("*")
                part = part.rstrip("*")
                if _is_negator(part):
                    negative = True
                words.append((part if prefix else stem(part), prefix))
            if words:
                alternatives.append(tuple(words))
        if alternatives:
            terms.append(tuple(alternatives))
    return _Concept(tuple(terms), negative) if terms else None


def _term_positions(sentence: _Sentence, term: tuple[tuple[tuple[str, bool], ...], ...]) -> list:
    positions = []
    stems, words = sentence.stems, sentence.words
    for alternative in term:
        size = len(alternative)
        for i in range(len(stems) - size + 1):
            ok = True
            for j, (want, prefix) in enumerate(alternative):
                got = words[i + j] if prefix else stems[i + j]
                if not (got.startswith(want) if prefix else got == want):
                    ok = False
                    break
            if ok:
                positions.append((i, i + size - 1))
    return positions


def _concept_hit(sentence: _Sentence, concept: _Concept) -> tuple[str, bool] | None:
    """The words a concept matched in the sentence (the tightest window) and whether a
    negator governs them; None if the concept is not there."""
    per_term = [_term_positions(sentence, term) for term in concept.terms]
    if any(not p for p in per_term):
        return None
    best: tuple[int, int, tuple] | None = None
    # The sentences are short and so are the position lists, so the product stays small;
    # cap it anyway so a pathological answer cannot cost more than a few milliseconds.
    for combo in itertools.islice(itertools.product(*per_term), 2000):
        lo = min(p[0] for p in combo)
        hi = max(p[1] for p in combo)
        if hi - lo <= CONCEPT_WINDOW_WORDS and (best is None or hi - lo < best[1] - best[0]):
            best = (lo, hi, combo)
    if best is None:
        return None
    lo, hi, combo = best
    used = {i for a, b in combo for i in range(a, b + 1)}
    clauses = {sentence.clause_of[i] for i in used}
    negated = False
    if not concept.negative:
        for i in range(max(0, lo - _NEGATION_WINDOW_WORDS), min(len(sentence.words), hi + 3)):
            if (
                i not in used
                and sentence.clause_of[i] in clauses
                and _is_negator(sentence.words[i])
            ):
                negated = True
                break
    return " ".join(sentence.words[lo : hi + 1]), negated


def _pattern_hits(
    sentence: _Sentence, patterns: Iterable[str]
) -> list[tuple[int, int, str, bool, str]]:
    """Every hit of a spec's patterns in one sentence: (start, end, matched, negated, line).
    Concept hits have no character offsets (-1)."""
    hits = []
    for line in patterns:
        line = line.strip()
        if not line or line.startswith("!"):
            continue
        if line.startswith("~"):
            concept = _parse_concept(line)
            if concept is None:
                continue
            found = _concept_hit(sentence, concept)
            if found is not None:
                hits.append((-1, -1, found[0], found[1], line))
            continue
        compiled = _compile(line)
        if compiled is None:
            continue
        for match in _pattern_finditer(line, compiled, sentence.text):
            if match.end() > match.start():
                negated = is_negated(sentence.text, match.start(), match.end(), line)
                hits.append((match.start(), match.end(), match.group(0), negated, line))
    # Hits that overlap a negated hit are negated too: in "not true that a larger learning
    # rate recovers it" a shorter pattern matching only "learning rate recovers" is the same
    # denied claim, even though the "not" lies outside its own window.
    # A pattern that spells its own negation ("weights (are )?not normalised") is exempt:
    # its author meant the negation, which the overlapping plain hit then only repeats.
    denied = [(s, e) for s, e, _, neg, _ in hits if neg and s >= 0]
    return [
        (
            s,
            e,
            m,
            neg or (not _spells_negation(line) and any(s < de and ds < e for ds, de in denied)),
            line,
        )
        for s, e, m, neg, line in hits
    ]
