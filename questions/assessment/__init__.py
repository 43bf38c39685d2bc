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

5. A key point or wrong answer written with no pattern at all is read by meaning
   (`meaning`): each clause of the answer is compared, by sentence embeddings, with the
   authored sentence and the question's labelled example answers (`ExampleSpec`), with the
   same polarity reading as the rules, so a denial never reads as the claim. Where there are
   patterns, the rules decide.

Every decision carries the sentence that made it (`Evidence.sentence`) and the rule, statement
or example answer behind it (`Evidence.rule`, `Evidence.via`).

The modules, one concern each: specs (what is read and answered), language (normalising,
sentences, negation, stems), patterns (instructors' patterns, bounded in time), matching (where
patterns and concepts hit a sentence), free_text (key points, wrong answers, stuffing, the
score), meaning (claims without patterns, read from sentences and labelled examples) and
short_answers (numbers, shapes, choices). The names below are the public ones.
"""

from questions.assessment.free_text import (
    MIN_SHARED_WORDS,
    RESEMBLANCE_SHARE,
    TEXT_NONE,
    TEXT_PARTIAL,
    TEXT_PASS_SHARE,
    TEXT_PASSED,
    TEXT_PASSED_MISSING,
    TEXT_STUFFING,
    WRONG_ANSWER_PENALTY,
    assess_text,
    check_text,
    find_unnegated,
    is_stuffing,
    nearest_wrong_answer,
    plain_label,
)
from questions.assessment.language import is_negated, normalise_text, split_sentences, stem
from questions.assessment.matching import CONCEPT_WINDOW_WORDS
from questions.assessment.patterns import (
    PATTERN_CATASTROPHIC,
    PATTERN_TIMEOUT_SECONDS,
    pattern_is_catastrophic,
)
from questions.assessment.short_answers import (
    CHOICE_CORRECT,
    CHOICE_MISSING,
    CHOICE_WRONG,
    NUMBER_CORRECT,
    NUMBER_NOT_FOUND,
    NUMBER_WRONG,
    NUMBER_WRONG_EXACT,
    NUMBER_WRONG_INTEGER,
    SHAPE_CORRECT,
    SHAPE_NOT_FOUND,
    SHAPE_WRONG,
    check_choice,
    check_number,
    check_shape,
    normalise_shape,
    parse_number,
)
from questions.assessment.specs import (
    ASSERTED,
    NEGATED,
    REFUTED,
    STUFFING,
    VIA_CONCEPT,
    VIA_MEANING,
    VIA_OVERLAP,
    VIA_PATTERN,
    CheckResult,
    Evidence,
    ExampleSpec,
    KeyPointSpec,
    TextAssessment,
    WrongAnswerSpec,
)

__all__ = [
    "ASSERTED",
    "CHOICE_CORRECT",
    "CHOICE_MISSING",
    "CHOICE_WRONG",
    "CONCEPT_WINDOW_WORDS",
    "MIN_SHARED_WORDS",
    "NEGATED",
    "NUMBER_CORRECT",
    "NUMBER_NOT_FOUND",
    "NUMBER_WRONG",
    "NUMBER_WRONG_EXACT",
    "NUMBER_WRONG_INTEGER",
    "PATTERN_CATASTROPHIC",
    "PATTERN_TIMEOUT_SECONDS",
    "REFUTED",
    "RESEMBLANCE_SHARE",
    "SHAPE_CORRECT",
    "SHAPE_NOT_FOUND",
    "SHAPE_WRONG",
    "STUFFING",
    "TEXT_NONE",
    "TEXT_PARTIAL",
    "TEXT_PASSED",
    "TEXT_PASSED_MISSING",
    "TEXT_PASS_SHARE",
    "TEXT_STUFFING",
    "VIA_CONCEPT",
    "VIA_MEANING",
    "VIA_OVERLAP",
    "VIA_PATTERN",
    "WRONG_ANSWER_PENALTY",
    "CheckResult",
    "Evidence",
    "ExampleSpec",
    "KeyPointSpec",
    "TextAssessment",
    "WrongAnswerSpec",
    "assess_text",
    "check_choice",
    "check_number",
    "check_shape",
    "check_text",
    "find_unnegated",
    "is_negated",
    "is_stuffing",
    "nearest_wrong_answer",
    "normalise_shape",
    "normalise_text",
    "parse_number",
    "pattern_is_catastrophic",
    "plain_label",
    "split_sentences",
    "stem",
]
