"""Deterministic, explainable assessment of answers. Pure Python: no Django imports.

Everything here is a function of its arguments, so the web, the API and the `assess` command
give the same verdict for the same text, and the tests need no database.

Free text is read the way an interviewer reads it, one sentence at a time:

1. The text is normalised (case, quotes, root signs, LaTeX, arrows, subscripts) and split into
   sentences; each sentence is split into clauses for negation.
2. A text that is a bare list of keywords or a phrase repeated over and over earns nothing
   (`is_stuffing`): key points are claims, and a word list states none.
3. A key point is covered by a sentence in which one of its patterns matches without being
   negated in its clause. Patterns are authored with the content, one per line, in two forms:
   a regular expression, or a *concept* line starting with `~`: words (stemmed with the
   Snowball English stemmer, so "normalised", "normalising" and "normalisation" are one word)
   that must all occur within a few words of each other, in any order. `a|b` gives
   alternatives, `a_b` a phrase, `a*` a prefix. Concepts catch paraphrases that no regex
   author thinks of, such as "the weights stop being normalised and can sum to more than one".
4. A wrong answer is a claim. It is matched only when a sentence *asserts* it: a hit that is
   negated ("the division does not keep…"), attributed to someone else ("someone might say…
   but", "it's a common myth that…"), introduced by "instead of"/"rather than", followed by
   its refutation in the same clause ("dividing by d_k instead would over-shrink the scores"),
   or ruled out by one of the wrong answer's own `!` lines ("softmax already makes them sum
   to one") is a refutation, recorded as denied evidence, and costs nothing.

Every decision carries the sentence that made it (`Evidence.sentence`).
"""

from __future__ import annotations

import contextvars
import itertools
import logging
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache, wraps
from re import _parser as sre_parser  # the standard library's own parse of a pattern
from typing import Any, TypeVar

import regex
import snowballstemmer

log = logging.getLogger(__name__)

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
TEXT_PASSED = "You covered the main points."
# A passed check can still miss a point: it stays a pass, and says what else to mention.
TEXT_PASSED_MISSING = "You covered the main points. Not mentioned yet: {missing}."
TEXT_PARTIAL = "Some key points are missing: {missing}."
TEXT_NONE = "None of the key points is there yet. Missing: {missing}."
TEXT_STUFFING = (
    "This reads as a list of keywords or a repeated phrase, so it earns no key points. "
    "Explain the argument in sentences."
)

# A stated misconception costs this much of the score: interviewers weigh a wrong claim
# against the right ones, but a single slip should not erase everything else.
WRONG_ANSWER_PENALTY = 0.25
# A free-text follow-up counts as answered when at least this share of its key points is there.
TEXT_PASS_SHARE = 0.5
# Without a pattern hit, an answer "resembles" a wrong answer when it contains at least this
# share of the statement's content words (and at least MIN_SHARED_WORDS of them).
RESEMBLANCE_SHARE = 0.75
MIN_SHARED_WORDS = 3
# The words of a concept line must all fall within this many words of each other: a
# sentence-wide bag of words would let a long answer match anything.
CONCEPT_WINDOW_WORDS = 12

# Stances of a hit, as recorded in Evidence.stance.
ASSERTED = "asserted"
NEGATED = "negated"
REFUTED = "refuted"
STUFFING = "stuffing"


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

# Someone else's claim, about to be refuted: "someone might say", "a common myth is".
_ATTRIBUTION = re.compile(
    r"\b(?:some(?:one|body| people)?|people|many|others?|a lot of people|you|one|the new engineer|"
    r"a (?:colleague|coworker|co-worker|teammate|friend|reviewer|manager|junior|student)|"
    r"my (?:colleague|coworker|co-worker|teammate|manager|lead|boss))"
    r"(?:\s+(?:teammate|colleague|coworker|person|engineer|reviewer|of them))?"
    r"\s+(?:might|may|could|would|will|often|sometimes|usually|tend to|will often|once)?\s*"
    r"(?:say|says|said|think|thinks|thought|claim|claims|claimed|suggest|suggests|suggested|"
    r"believe|believes|believed|argue|argues|argued|assume|assumes|assumed|call|calls|expect|"
    r"expects|propose|proposes|proposed|told me|wanted to)\b"
    r"|\bwrong (?:fix|fixes|answer|answers|idea|ideas|explanation)\b|\bwarn(?:ed)? against\b"
    r"|\bsomeone(?: \w+){0,4} '?(?:fixed|tried|wanted|did|decided)\b|\boh sure\b"
    r"|\b(?:common |popular |classic )?(?:myth|misconception|misunderstanding|mistake|fallacy)\b"
    r"|\btempt(?:ing|ed) to\b|\b(?:the |a )?tempting (?:fix|answer|idea|reading|explanation)\b"
    r"|\bcontrary to\b|\bnot true that\b|\bisn'?t true that\b"
    r"|\bit'?s not that\b|\bit is not that\b|\bwrong to (?:say|think)\b"
)
# "instead of X", "rather than X": X is what the speaker rejects.
_REJECTED_ALTERNATIVE = re.compile(
    r"\b(?:instead of|rather than|not by|as opposed to|even (?:with|if|a|at|using|given))"
    r"(?:\s+[a-z']+){0,2}\s*$"
)
# A verdict after a claim, in the same clause, that refutes it: "dividing by d_k instead
# would over-shrink the scores", "scaling V changes nothing".
_REFUTING_VERDICT = re.compile(
    r"\b(?:over-?\w+|too (?:small|much|far|aggressive|little)|flatten\w*|destabili[sz]\w*|"
    r"breaks?|hurts?|fails?|wrong|worse|useless|pointless|nothing|doesn'?t|don'?t|won'?t|"
    r"wouldn'?t|isn'?t|aren'?t|can'?t|cannot|not|never|no longer helps?|only rescales?|"
    r"amplif\w*|myth|unstable|instabilit\w*|diverg\w*|explod\w*|nois[ey]\w*|"
    r"miss(?:es)? the point|beside the point|red herring|irrelevant|common suggestion|"
    r"naive|misread\w*|folklore|urban legend)\b"
)

# A sentence that opens with a verdict on the previous one: "That does nothing.", "Wrong:".
_NEXT_SENTENCE_VERDICT = re.compile(
    r"\s*(?:a: ?)?(?:(?:but |and |except |though |although )?(?:that|this|it|which|they|he|she|"
    r"people|those people)"
    r"(?:'s|'re| is| are| was| were| does| do| would| will| only)?\s+"
    r"(?:\w+\s+){0,2}?(?:nothing|not|doesn'?t|don'?t|won'?t|isn'?t|aren'?t|wouldn'?t|can'?t|"
    r"cannot|never|wrong|mistaken|incorrect|misses|useless|pointless|irrelevant|a myth|naive)\b"
    r"|(?:(?:also|of course|absolutely|definitely|certainly|sadly) )?"
    # ("Not 100% sure" hedges the claim; it does not refute it.)
    r"(?:no|nope|wrong|false|not really|not quite|not at all|hardly|nah|not)\b"
    r"(?! (?:\d+ ?%|entirely|totally|completely|quite|so|really|too) ?sure)[:,.!\u2014-]?"
    r"|only if\b|(?:that's|that is) what i(?:'d| would) have said\b)"
)

# A refuting verdict is looked for up to the end of the claim's clause; a parenthesis inside
# it ("dividing V by sqrt(d_k) after the softmax changes nothing") does not end it.
# "otherwise" opens the counterfactual that justifies the claim, not a verdict on it.
_VERDICT_END = re.compile(r"[,;:!?\n]|\b(?:but|because|since|so|then|while|whereas|otherwise)\b")

# A clause that supposes rather than states.
_HYPOTHETICAL = re.compile(r"\s*(?:even )?(?:if|suppose|assuming)\b")
_SUPPOSED_WORDS = 3
_ABOUT_THE_CLAIM = re.compile(r"\s*(?:which|that|but (?:it|this|that)|and (?:it|this|that)|yet)\b")

_STEMMER = snowballstemmer.stemmer("english")
# British -ise spellings stem differently from -ize ones ("normalis" vs "normal"): fold them.
_BRITISH_ISE = re.compile(r"is(e|ed|es|ing|ation|ations)$")


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

    def as_dict(self) -> dict[str, object]:
        return {
            "slug": self.slug,
            "matched": self.matched,
            "negated": self.negated,
            "sentence": self.sentence,
            "stance": self.stance,
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


# --- Instructors' patterns: refused when catastrophic, and bounded in time anyway ------------

PATTERN_CATASTROPHIC = (
    "{pattern!r} repeats a group that itself repeats, such as (a+)+ or (\\w*)*: on some "
    "answers that takes exponential time. Repeat the inner part only, e.g. a+ or (?:\\w+ )+."
)
# Matching one pattern against one sentence stops after this long: that pattern is then left
# out of the rest of the answer's assessment (and logged), so a pattern that slipped past the
# check below costs a request at most this much, not seconds per character. Instructors'
# patterns take microseconds on real answers, so the bound never changes a real verdict.
PATTERN_TIMEOUT_SECONDS = 0.1

_Result = TypeVar("_Result")
# The patterns that ran out of time in the assessment under way (None outside one).
_timed_out: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar(
    "assessment_timed_out", default=None
)


@contextmanager
def _one_answer() -> Iterator[None]:
    """Scope of one answer's assessment: a pattern that ran out of time is skipped until it
    ends. Nested calls (assess_text calls find_unnegated) share the outer one's."""
    if _timed_out.get() is not None:
        yield
        return
    token = _timed_out.set(set())
    try:
        yield
    finally:
        _timed_out.reset(token)


def _per_answer(function: Callable[..., _Result]) -> Callable[..., _Result]:
    @wraps(function)
    def wrapped(*args: Any, **kwargs: Any) -> _Result:
        with _one_answer():
            return function(*args, **kwargs)

    return wrapped


_REPEATS = (sre_parser.MAX_REPEAT, sre_parser.MIN_REPEAT)


def _repeats_within(items: Any) -> Iterator[tuple[int, Any]]:
    """(min, body) of each repeat in items, through groups and alternatives but not into the
    repeats it yields (their own bodies are checked as outer repeats in turn)."""
    for op, arg in items:
        if op in _REPEATS:
            yield arg[0], arg
        elif op == sre_parser.SUBPATTERN:
            yield from _repeats_within(arg[-1])
        elif op == sre_parser.BRANCH:
            for branch in arg[1]:
                yield from _repeats_within(branch)


def _nested_repeat(items: Any) -> bool:
    for op, arg in items:
        if op in _REPEATS:
            _, high, body = arg
            if high == sre_parser.MAXREPEAT and _ambiguous_body(body):
                return True
            if _nested_repeat(body):
                return True
        elif op == sre_parser.SUBPATTERN:
            if _nested_repeat(arg[-1]):
                return True
        elif op == sre_parser.BRANCH:
            if any(_nested_repeat(branch) for branch in arg[1]):
                return True
        elif op in (sre_parser.ASSERT, sre_parser.ASSERT_NOT):
            if _nested_repeat(arg[1]):
                return True
        elif op == sre_parser.ATOMIC_GROUP:
            if _nested_repeat(arg):
                return True
    return False


def _ambiguous_body(body: Any) -> bool:
    """Whether an unbounded repeat's body holds an unbounded repeat with nothing else it must
    match: then a run of text splits into iterations in exponentially many ways ((a+)+,
    (x+y?)+). In (\\w+\\s+)* the required \\s+ fixes where each iteration ends."""
    body_min = body.getwidth()[0]
    for low, (_, high, inner) in _repeats_within(body):
        if high == sre_parser.MAXREPEAT and body_min - low * inner.getwidth()[0] <= 0:
            return True
    return False


def pattern_is_catastrophic(pattern: str) -> bool:
    """Whether the pattern repeats without bound a group whose only required part is itself an
    unbounded repeat, as in (a+)+, (\\w*)*, (?:x+y?)+: the shape whose failed matches
    backtrack exponentially. A bounded outer repeat ((?:\\w+ ){0,3}), a body with a required
    separator ((?:\\w+\\s+)*) and a pattern that does not parse (compiling it reports that)
    pass. Overlapping alternatives ((a|aa)+) are not caught here: the
    time bound on matching (PATTERN_TIMEOUT_SECONDS) covers whatever this misses.
    """
    try:
        parsed = sre_parser.parse(pattern.strip(), re.IGNORECASE)
    except (re.error, RecursionError, OverflowError):
        return False
    return _nested_repeat(parsed)


@lru_cache(maxsize=4096)
def _compile(pattern: str) -> regex.Pattern[str] | None:
    # The regex module for instructors' patterns: the same syntax and matches as re (VERSION0)
    # with a timeout, which re lacks. Our own fixed patterns stay on re.
    try:
        return regex.compile(pattern, regex.IGNORECASE | regex.VERSION0)
    except (regex.error, re.error):
        # A broken instructor pattern must not take the page down; the model's clean()
        # reports it when it is saved, so this only guards old rows.
        return None


def _pattern_finditer(pattern: str, compiled: regex.Pattern[str], text: str) -> list[Any]:
    """Every match of an instructor's pattern in text, or none if it ran out of time (it is
    then left out of this answer's assessment, and logged)."""
    skipped = _timed_out.get()
    if skipped is not None and pattern in skipped:
        return []
    try:
        # Most patterns miss most sentences: one search answers those, where building a
        # scanner for finditer cost several times more.
        if compiled.search(text, timeout=PATTERN_TIMEOUT_SECONDS) is None:
            return []
        return list(compiled.finditer(text, timeout=PATTERN_TIMEOUT_SECONDS))
    except TimeoutError:
        if skipped is not None:
            skipped.add(pattern)
        log.warning(
            "assessment pattern %r ran out of time (%.2f s) on a %d-character sentence; "
            "assessed without it",
            pattern,
            PATTERN_TIMEOUT_SECONDS,
            len(text),
        )
        return []


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


# --- Stemmed concepts -------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem, with British -ise spellings folded into -ize ones."""
    word = word.strip("'")
    if len(word) > 6:
        word = _BRITISH_ISE.sub(lambda m: "iz" + m.group(1), word)
    return _STEMMER.stemWord(word)


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


# --- Stuffing -----------------------------------------------------------------------------------


def is_stuffing(text: str) -> bool:
    """True for a bare keyword list or a phrase repeated to pile up matches.

    A short answer in sentences ("Tiny gradients, flat loss.") is not a list: a list is five
    or more items of one or two words with no function word anywhere, a run of seven or more
    words with no function word and no punctuation, a "Keywords:" label, or the same words
    said over and over.
    """
    normalised = normalise_text(text)
    words = _WORD.findall(normalised)
    if not words:
        return False
    if _KEYWORD_LABEL.match(normalised):
        return True
    # "spike spike … divide divide": the same word twice in a row, more than once.
    if len(_DOUBLED_WORD.findall(normalised)) >= 2 or _TRIPLED_WORD.search(normalised):
        return True
    # The same few words over and over. Only real words count: a formula repeats d_k and q.
    real = [w for w in words if len(w) >= 3 and w.isalpha()]
    if len(real) >= 6 and len(real) <= 60 and len(set(real)) / len(real) <= 0.5:
        return True
    items = [i for i in re.split(r"[,;\n]", normalised) if _WORD.search(i)]
    if len(items) >= 5 and sum(len(_WORD.findall(i)) for i in items) / len(items) <= 2.5:
        return True
    # "softmax. gradient. variance. sqrt.": a list written as one-word sentences.
    pieces = [i for i in re.split(r"[.,;:\n]", normalised) if _WORD.search(i)]
    if len(pieces) >= 8 and sum(len(_WORD.findall(i)) for i in pieces) / len(pieces) <= 2.0:
        return True
    if any(w in _FUNCTION_WORDS for w in words):
        return False
    # Brackets of a formula ("sqrt(d_k)") are not the punctuation of a sentence.
    return len(words) >= 7 and not re.search(r"[.,;:!?\n]", normalised.strip().rstrip("."))


# --- Matching -------------------------------------------------------------------------------------


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


@_per_answer
def find_unnegated(text: str, patterns: Iterable[str]) -> tuple[Evidence | None, list[Evidence]]:
    """The first non-negated hit of any pattern, plus every hit seen (for the explanation)."""
    patterns = tuple(patterns)
    seen: list[Evidence] = []
    first: Evidence | None = None
    for raw in split_sentences(normalise_text(text)):
        sentence = _sentence(raw)
        for _, _, matched, negated, _ in _pattern_hits(sentence, patterns):
            evidence = Evidence("", matched, negated, raw, NEGATED if negated else ASSERTED)
            seen.append(evidence)
            if first is None and not negated:
                first = evidence
    return first, seen


def _supposed(sentence: str, start: int) -> bool:
    """Whether the hit at `start` opens an if-clause: "if the gradients are small, …"
    supposes, it does not state. Only the first few words after the "if" count, because an
    if-clause often runs into its main clause without a comma ("if you divide by d_k you've
    overdone it")."""
    clause = _clause_start(sentence, start)
    opening = _HYPOTHETICAL.match(sentence, clause)
    if opening is None:
        return False
    return len(_WORD.findall(sentence[opening.end() : start])) <= _SUPPOSED_WORDS


def _wrong_answer_stance(
    sentence: str, start: int, end: int, negated: bool, pattern: str = ""
) -> str:
    """How a sentence takes a wrong-answer claim it contains, given the hit's character
    offsets (-1 for a concept hit, which has none and is judged on the whole sentence)."""
    if negated:
        return NEGATED
    # A claim inside a denied clause is denied however far the negator stands: "you can't
    # train your way out of a saturated softmax with bigger steps". Wider than a key point's
    # window, because a false rebuttal costs more than a missed one.
    if (
        start > 0
        and not _spells_negation(pattern)
        and _NEGATORS.search(sentence[_clause_start(sentence, start) : start])
    ):
        return NEGATED
    # Parentheses do not end a statement ("dividing V by sqrt(d_k) changes nothing"): blank
    # them out, keeping the offsets.
    flat = re.sub(r"\([^()]*\)", lambda m: " " * len(m.group(0)), sentence)
    if start < 0:
        before, rest = sentence, flat
    else:
        before = sentence[:start]
        cut = _VERDICT_END.search(flat, end)
        # ", which does not help", ", but that only adds noise": a clause about the claim
        # itself belongs to it.
        while cut and (about := _ABOUT_THE_CLAIM.match(flat, cut.end())):
            cut = _VERDICT_END.search(flat, about.end())
        rest = flat[end : cut.start() if cut else len(flat)]
        # "instead of scaling the values, …": the speaker rejects the claim.
        if _REJECTED_ALTERNATIVE.search(sentence[_clause_start(sentence, start) : start]):
            return REFUTED
    # "someone might say X, but …", "it's a common myth that X": the sentence reports X.
    if _ATTRIBUTION.search(before):
        return REFUTED
    # "dividing by d_k instead would over-shrink the scores": the verdict follows the claim.
    if _REFUTING_VERDICT.search(rest):
        return REFUTED
    return ASSERTED


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


def _wrong_answer_evidence(
    sentences: Sequence[_Sentence], wrong: WrongAnswerSpec
) -> list[Evidence]:
    excluding = [p.strip()[1:].strip() for p in wrong.patterns if p.strip().startswith("!")]
    exclusions = [(p, c) for p, c in ((p, _compile(p)) for p in excluding) if c]
    evidence = []
    for index, sentence in enumerate(sentences):
        hits = _pattern_hits(sentence, wrong.patterns)
        if not hits:
            continue
        excluded = next((c for p, c in exclusions if _pattern_finditer(p, c, sentence.text)), None)
        # "A colleague suggested scaling V. That does nothing for this problem.": the next
        # sentence's verdict on "that" refutes the claim reported just before it.
        # "Someone 'fixed' it with 8x the LR. Did that recover training? Of course not.": the
        # verdict may come one sentence later, after a question or an aside.
        following = " ".join(
            sentences[j].text for j in range(index + 1, min(index + 2, len(sentences)))
        )
        later = [sentences[j].text for j in range(index + 1, min(index + 3, len(sentences)))]
        excluded = (
            excluded
            or any(_NEXT_SENTENCE_VERDICT.match(text) for text in later)
            # The wrong answer's own refuting cues ("softmax already does that") count in the
            # sentence that answers it, too.
            or next((c for p, c in exclusions if _pattern_finditer(p, c, following)), None)
        )
        stances = [
            REFUTED if excluded else _wrong_answer_stance(sentence.text, start, end, negated, line)
            for start, end, _, negated, line in hits
        ]
        # One claim per sentence: once any hit of it is denied or reported, so is the rest
        # ("dividing by d_k would over-shrink: variance 1/d_k" refutes both hits).
        refuted = REFUTED if REFUTED in stances else None
        for (_, _, matched, _, _), stance in zip(hits, stances, strict=True):
            stance = refuted or stance
            evidence.append(
                Evidence(wrong.slug, matched, stance != ASSERTED, sentence.text, stance)
            )
    return evidence


def _nearest(
    normalised: str, sentences: Sequence[_Sentence], wrong_answers: Sequence[WrongAnswerSpec]
) -> tuple[str | None, list[Evidence]]:
    evidence: list[Evidence] = []
    best: tuple[int, int, str] | None = None
    for order, wrong in enumerate(wrong_answers):
        found = _wrong_answer_evidence(sentences, wrong)
        evidence.extend(found)
        asserted = sum(1 for e in found if e.stance == ASSERTED)
        # An answer that refutes the claim (reports it to reject it, or passes a verdict on
        # it; a merely negated wording may still assert it) in as many sentences as it seems
        # to assert it is
        # arguing against it ("The tempting fix is a bigger LR. It doesn't work: a bigger
        # step just scales up nothing."): a false rebuttal costs more than a missed one.
        said = {e.sentence for e in found if e.stance == ASSERTED}
        denied = {e.sentence for e in found if e.stance == REFUTED} - said
        if len(denied) >= len(said):
            asserted = 0
        # The claim asserted most often wins; on a tie, the first in the author's order.
        if asserted and (best is None or asserted > best[0]):
            best = (asserted, -order, wrong.slug)
    if best is not None:
        return best[2], evidence
    # Word overlap cannot tell "recovers" from "does not recover", nor a claim from its
    # report, so a text with any negator or refutation is never matched by overlap alone:
    # a missed diagnosis is cheaper than accusing a correct answer of a misconception.
    if _NEGATORS.search(normalised) or _ATTRIBUTION.search(normalised) or evidence:
        return None, evidence
    share_best: tuple[float, str] | None = None
    # Overlap is a stop-gap for a wrong answer that has no patterns yet: once its author has
    # written claim patterns, sharing its words is not asserting it ("the division keeps the
    # attention weights from collapsing onto one key" shares five words with "the division
    # keeps the attention weights summing to one").
    for wrong in wrong_answers:
        if any(p.strip() for p in wrong.patterns):
            continue
        share = _resemblance(normalised, wrong.statement)
        if share >= RESEMBLANCE_SHARE and (share_best is None or share > share_best[0]):
            share_best = (share, wrong.slug)
    if share_best is not None:
        evidence.append(
            Evidence(share_best[1], normalised.strip(), False, normalised.strip(), ASSERTED)
        )
    return (share_best[1] if share_best else None), evidence


@_per_answer
def nearest_wrong_answer(
    text: str, wrong_answers: Sequence[WrongAnswerSpec]
) -> tuple[str | None, list[Evidence]]:
    """The wrong answer the text asserts, or None, with every hit seen.

    An asserted pattern hit wins (the claim asserted in most sentences, then the author's
    order). Failing that, the statement sharing the most content words, if it shares enough
    and the text neither negates nor reports anything.
    """
    normalised = normalise_text(text)
    if is_stuffing(text):
        return None, []
    sentences = [_sentence(s) for s in split_sentences(normalised)]
    return _nearest(normalised, sentences, wrong_answers)


@_per_answer
def assess_text(
    text: str,
    key_points: Sequence[KeyPointSpec],
    wrong_answers: Sequence[WrongAnswerSpec] = (),
) -> TextAssessment:
    """Key points covered, the wrong answer it asserts, and a score in [0, 1].

    score = covered / total key points, minus WRONG_ANSWER_PENALTY if a wrong answer is
    matched, clamped to [0, 1] and rounded to 2 places so it prints the same everywhere.
    """
    normalised = normalise_text(text)
    if is_stuffing(text):
        excerpt = normalised.strip()[:200]
        return TextAssessment(
            key_points=[],
            missed=[p.slug for p in key_points],
            wrong_answer=None,
            score=0.0,
            # One denied item that says why nothing counted, under the slug "stuffing".
            evidence=[Evidence(STUFFING, excerpt, True, excerpt, STUFFING)],
            stuffing=True,
        )
    sentences = [_sentence(s) for s in split_sentences(normalised)]
    covered: list[str] = []
    missed: list[str] = []
    evidence: list[Evidence] = []
    for point in key_points:
        hit = False
        for sentence in sentences:
            # The first sentence that earns a point is its evidence; reading on would only
            # cost time on long answers (a 4000-character answer stays within budget).
            if hit:
                break
            for start, _, matched, negated, _ in _pattern_hits(sentence, point.patterns):
                if start >= 0 and _supposed(sentence.text, start):
                    continue
                evidence.append(
                    Evidence(
                        point.slug,
                        matched,
                        negated,
                        sentence.text,
                        NEGATED if negated else ASSERTED,
                    )
                )
                hit = hit or not negated
        (covered if hit else missed).append(point.slug)
    wrong, wrong_evidence = _nearest(normalised, sentences, wrong_answers)
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
    if ok:
        message = NUMBER_CORRECT
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


def plain_label(label: str) -> str:
    """A key point's label as plain text for a message: no $…$ maths delimiters or LaTeX
    commands (the messages are shown as text, not rendered)."""
    label = label.replace("$", "").replace("\\sqrt", "√").replace("\\", "")
    return re.sub(r"\s+", " ", label).strip()


def _labels(slugs: Sequence[str], key_points: Sequence[KeyPointSpec]) -> str:
    by_slug = {kp.slug: plain_label(kp.label) or kp.slug for kp in key_points}
    # Quoted, because a label may hold its own commas or semicolons.
    return ", ".join(f"\u201c{by_slug.get(s, s)}\u201d" for s in slugs)


@_per_answer
def check_text(text: str, key_points: Sequence[KeyPointSpec]) -> tuple[CheckResult, TextAssessment]:
    """A free-text follow-up: passed when at least TEXT_PASS_SHARE of its key points are
    there. The message names the missing key points by label, so a pass and a miss always
    read as what they are."""
    assessment = assess_text(text, key_points)
    ok = bool(key_points) and len(assessment.key_points) / len(key_points) >= TEXT_PASS_SHARE
    missing = _labels(assessment.missed, key_points)
    if assessment.stuffing:
        message = TEXT_STUFFING
    elif ok:
        message = TEXT_PASSED_MISSING.format(missing=missing) if assessment.missed else TEXT_PASSED
    elif assessment.key_points:
        message = TEXT_PARTIAL.format(missing=missing)
    else:
        message = TEXT_NONE.format(missing=missing)
    return CheckResult("text", ok, message), assessment
