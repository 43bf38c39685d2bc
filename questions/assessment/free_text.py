"""Free text: the key points an answer covers, the wrong answer it asserts (and the ones it
only reports or refutes), keyword stuffing, the score, and a follow-up's verdict."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from questions.assessment.language import (
    _DOUBLED_WORD,
    _FUNCTION_WORDS,
    _KEYWORD_LABEL,
    _NEGATORS,
    _STOPWORDS,
    _TRIPLED_WORD,
    _WORD,
    _clause_start,
    _Sentence,
    _sentence,
    _spells_negation,
    normalise_text,
    split_sentences,
)
from questions.assessment.matching import _pattern_hits
from questions.assessment.meaning import Reading, read
from questions.assessment.patterns import _compile, _pattern_finditer, _per_answer
from questions.assessment.specs import (
    ASSERTED,
    NEGATED,
    REFUTED,
    STUFFING,
    VIA_OVERLAP,
    CheckResult,
    Evidence,
    ExampleSpec,
    KeyPointSpec,
    TextAssessment,
    WrongAnswerSpec,
    via_of,
)

# User-facing messages. Tests assert on these constants, so change them here only.
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
        for (_, _, matched, _, line), stance in zip(hits, stances, strict=True):
            stance = refuted or stance
            evidence.append(
                Evidence(
                    wrong.slug,
                    matched,
                    stance != ASSERTED,
                    sentence.text,
                    stance,
                    rule=line,
                    via=via_of(line),
                )
            )
    return evidence


def _has_patterns(spec: KeyPointSpec | WrongAnswerSpec) -> bool:
    return any(p.strip() and not p.strip().startswith("!") for p in spec.patterns)


def _nearest(
    normalised: str,
    sentences: Sequence[_Sentence],
    wrong_answers: Sequence[WrongAnswerSpec],
    meant: Mapping[str, Reading] | None = None,
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
    # A wrong answer without patterns is read by meaning: the one asserted most surely wins.
    if meant:
        said = [r for r in meant.values() if r.verdict is True and r.evidence is not None]
        evidence.extend(r.evidence for r in meant.values() if r.evidence is not None)
        if said:
            return max(said, key=lambda r: r.margin).slug, evidence
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
            Evidence(
                share_best[1],
                normalised.strip(),
                False,
                normalised.strip(),
                ASSERTED,
                rule=next(w.statement for w in wrong_answers if w.slug == share_best[1]),
                via=VIA_OVERLAP,
            )
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
    examples: Sequence[ExampleSpec] = (),
) -> TextAssessment:
    """Key points covered, the wrong answer it asserts, and a score in [0, 1].

    A key point or wrong answer with patterns is decided by its rules; one without is read by
    meaning (questions.assessment.meaning), from its sentence and the labelled `examples`.

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
    by_meaning = [s.slug for s in (*key_points, *wrong_answers) if not _has_patterns(s)]
    meant = read(text, key_points, wrong_answers, examples, slugs=by_meaning) if by_meaning else {}
    for point in key_points:
        if point.slug in meant:
            reading = meant[point.slug]
            if reading.evidence is not None:
                evidence.append(reading.evidence)
            # Abstaining, with no rule to fall back on, credits nothing.
            (covered if reading.verdict is True else missed).append(point.slug)
            continue
        hit = False
        for sentence in sentences:
            # The first sentence that earns a point is its evidence; reading on would only
            # cost time on long answers (a 4000-character answer stays within budget).
            if hit:
                break
            for start, _, matched, negated, line in _pattern_hits(sentence, point.patterns):
                if start >= 0 and _supposed(sentence.text, start):
                    continue
                evidence.append(
                    Evidence(
                        point.slug,
                        matched,
                        negated,
                        sentence.text,
                        NEGATED if negated else ASSERTED,
                        rule=line,
                        via=via_of(line),
                    )
                )
                hit = hit or not negated
        (covered if hit else missed).append(point.slug)
    wrong_meant = {w.slug: meant[w.slug] for w in wrong_answers if w.slug in meant}
    wrong, wrong_evidence = _nearest(normalised, sentences, wrong_answers, wrong_meant)
    evidence.extend(wrong_evidence)
    score = len(covered) / len(key_points) if key_points else 0.0
    if wrong is not None:
        score -= WRONG_ANSWER_PENALTY
    score = round(min(1.0, max(0.0, score)), 2)
    return TextAssessment(
        key_points=covered, missed=missed, wrong_answer=wrong, score=score, evidence=evidence
    )


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
