"""The English the assessment reads: normalisation, sentences and clauses, negation, stems.

Our own fixed patterns, on the standard library's re; instructors' patterns are in
questions.assessment.patterns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that flip the meaning of what follows them in the same clause. "without" is left
# out on purpose: "without the division the scores grow" asserts that they grow.
_NEGATORS = re.compile(
    r"\b(?:not|no|never|none|nothing|neither|nor|cannot|can't|won't|doesn't|don't|didn't|"
    r"isn't|aren't|wasn't|weren't|shouldn't|wouldn't|couldn't|hardly|barely|fails? to)\b|n't\b"
)
_NEGATOR_WORDS = _words("not no never none nothing neither nor cannot hardly barely")
# Negation reaches back at most this many words, and never across a clause boundary.
_NEGATION_WINDOW_WORDS = 4
_NEGATION_AFTER_WORDS = 2
_CLAUSE_BOUNDARY = re.compile(
    r"[.;:!?,()\n]|\s[-\u2013\u2014]\s|\u2014|"
    r"\b(?:but|because|since|so|although|though|while|whereas|hence|thus)\b"
)
_WORD = re.compile(r"[a-z0-9_']+")
_TOKEN = re.compile(r"[a-z0-9_'\-]+|[^\sa-z0-9_'\-]")
_STOPWORDS = _words(
    "a an the of to in on at by for and or is are be it its it's this that with as from "
    "into than then them they their there these those was were will would can could"
)
# Words that make a sentence a sentence: a text with none of them is a word list.
_FUNCTION_WORDS = _words(
    "a an the is are be been being was were it its it's this that these those to of in on "
    "at by for with from into as so and or but because if then than when which who not no "
    "do does did doesn't don't isn't would will can could should might may has have had get "
    "gets make makes we you i they there he she our your their"
)
_DOUBLED_WORD = re.compile(r"\b([a-z][a-z_'-]+)\s+\1\b")
_TRIPLED_WORD = re.compile(r"\b([a-z][a-z_'-]+)\s+\1\s+\1\b")
_KEYWORD_LABEL = re.compile(
    r"^\s*(?:key ?(?:words?|terms?)|keywords|tags|terms)\s*:", re.IGNORECASE
)


_STEMMER = snowballstemmer.stemmer("english")
# British -ise spellings stem differently from -ize ones ("normalis" vs "normal"): fold them.
_BRITISH_ISE = re.compile(r"is(e|ed|es|ing|ation|ations)$")


# Subscript k, superscript T, the transpose tack (U+22A4) and friends, as typed in formulas.
_SUBSCRIPTS = str.maketrans({"ₖ": "k", "ᵀ": "t", "\u22a4": "t", "ᵏ": "k", "ₜ": "t"})


def normalise_text(text: str) -> str:
    """Lower-case, straighten quotes and spell out the root sign, arrows and other symbols,
    so patterns stay simple."""
    text = text.translate(_SUBSCRIPTS).lower()
    text = re.sub(r"\bd k\b", "d_k", text)
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u2212", "-")
    text = text.replace("√", " sqrt ")
    # Candidates type LaTeX too: "$\\sqrt{d_k}$" reads as "sqrt d_k" for the patterns.
    text = text.replace("\\sqrt", " sqrt ").replace("$", "")
    text = re.sub(r"[{}]", " ", text)
    text = re.sub(r"\bcan not\b", "cannot", text)
    # "almost nothing", "next to no signal" state that something is tiny; they deny nothing.
    text = re.sub(
        r"\b(?:almost|nearly|next to|close to|practically|virtually|basically) nothing\b",
        "almost zero",
        text,
    )
    text = re.sub(
        r"\b(?:almost|nearly|next to|practically|virtually|basically) no\b", "little", text
    )
    text = re.sub(r"\bno matter\b", "regardless of", text)
    # "a → b" states a consequence: read it as "a so b", which is also a clause boundary.
    text = re.sub(r"\s*(?:→|⇒|⟹|=>|-->|->)\s*", " so ", text)
    text = text.replace("÷", " divided by ").replace("∝", " proportional to ")
    text = text.replace("≈", " about ").replace("≫", " much greater than ")
    text = text.replace("≪", " much less than ").replace("≠", " not equal to ")
    return re.sub(r"[ \t]+", " ", text)


# --- Sentences and clauses ------------------------------------------------------------------

# A sentence ends at . ! ? followed by a space (so "0.125", "e.g" and "Q@K.T" stay whole) or
# at a newline. A run of bullet lines is one enumeration: its items are joined with "; ", so
# a chain of steps ("- Q K^T", "- divide", "- softmax", "- times V") reads as one statement
# while each item stays its own clause for negation.
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)[.!?]+(?=\s|$)")
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d+[.)])\s+")


def split_sentences(text: str) -> list[str]:
    """The sentences of a normalised text, in order (a bullet list counts as one)."""
    sentences: list[str] = []
    items: list[str] = []

    def flush() -> None:
        joined = "; ".join(i for i in items if i)
        if joined:
            sentences.append(joined)
        items.clear()

    for line in text.split("\n"):
        bullet = _BULLET.match(line)
        if bullet:
            items.append(line[bullet.end() :].strip().rstrip("."))
            continue
        flush()
        for part in _SENTENCE_END.split(line):
            part = part.strip()
            if part:
                sentences.append(part)
    flush()
    return sentences


def _clause_start(text: str, position: int) -> int:
    start = 0
    for boundary in _CLAUSE_BOUNDARY.finditer(text, 0, position):
        start = boundary.end()
    return start


def _clause_end(text: str, position: int) -> int:
    boundary = _CLAUSE_BOUNDARY.search(text, position)
    return boundary.start() if boundary else len(text)


def _is_negator(word: str) -> bool:
    return word in _NEGATOR_WORDS or word.endswith("n't") or word in ("fail", "fails")


def _spells_negation(pattern: str) -> bool:
    """Whether a pattern's author wrote a negator into it ("no (error|crash)"); regex escapes
    such as the \\b of "\\bno" are not letters of the word."""
    return bool(_NEGATORS.search(re.sub(r"\\[a-zA-Z]", " ", pattern.lower())))


def is_negated(text: str, start: int, end: int, pattern: str = "") -> bool:
    """True when a negator governs text[start:end].

    Looks at the match itself, at up to four words before it and two after it in the same
    clause. When the pattern itself spells a negation ("no error"), the author meant it, so
    only the words before the match are checked.
    """
    clause_start = _clause_start(text, start)
    before_words = _WORD.findall(text[clause_start:start])[-_NEGATION_WINDOW_WORDS:]
    if any(_NEGATORS.fullmatch(w) or w.endswith("n't") for w in before_words):
        return True
    if _spells_negation(pattern):
        return False
    if _NEGATORS.search(text[start:end]):
        return True
    # "scaling the values would not help": a negator just after the claim also flips it,
    # unless a relative clause starts there ("a winner-takes-all that barely passes…").
    after = text[end : _clause_end(text, end)]
    # A new subject starts a new claim even without a comma: "once softmax is saturated
    # there's no gradient" denies the gradient, not the saturation.
    after = re.split(
        r"\b(?:that|which|who|and|or|there|there's|it|it's|this|they|we|you)\b", after, maxsplit=1
    )[0]
    after_words = _WORD.findall(after)[:_NEGATION_AFTER_WORDS]
    return any(_NEGATORS.fullmatch(w) or w.endswith("n't") for w in after_words)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem, with British -ise spellings folded into -ize ones."""
    word = word.strip("'")
    if len(word) > 6:
        word = _BRITISH_ISE.sub(lambda m: "iz" + m.group(1), word)
    return _STEMMER.stemWord(word)


@dataclass(frozen=True)
class _Sentence:
    text: str
    words: tuple[str, ...]  # lower-case word tokens, punctuation dropped
    stems: tuple[str, ...]
    clause_of: tuple[int, ...]  # the clause index of each word


_CLAUSE_WORDS = _words("but because since so although though while whereas hence thus")


# Em and en dashes (U+2014, U+2013) separate clauses like commas do.
_CLAUSE_PUNCTUATION = frozenset(",;:()!?\u2014\u2013")


def _sentence(text: str) -> _Sentence:
    words: list[str] = []
    clause_of: list[int] = []
    clause = 0
    for token in _TOKEN.findall(text):
        if not (token[0].isalnum() or token[0] in "_'"):
            if token in _CLAUSE_PUNCTUATION:
                clause += 1
            continue
        if token in _CLAUSE_WORDS:
            clause += 1
        words.append(token)
        clause_of.append(clause)
    return _Sentence(text, tuple(words), tuple(stem(w) for w in words), tuple(clause_of))
