"""Why an answer earned what it did: the assessor's evidence as the pages show it (the words
that counted, marked in their sentence, and the rule that matched), for the candidate after
answering and for the instructor in Validate and Try an answer."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.utils.html import escape, format_html, format_html_join

from common.rendering import render_inline
from questions import assessment
from questions.models import KeyPoint

if TYPE_CHECKING:
    from questions.selectors import QuestionContent, QuestionPage

# Evidence.via, as the pages name it.
VIA_LABELS = {
    assessment.VIA_PATTERN: "pattern line",
    assessment.VIA_CONCEPT: "concept line",
    assessment.VIA_OVERLAP: "resembles the statement",
    assessment.VIA_MEANING: "resembles the example answer",
}


@dataclass(frozen=True)
class EvidenceRule:
    via: str
    rule: str

    @property
    def via_label(self) -> str:
        return VIA_LABELS.get(self.via, "rule")


@dataclass(frozen=True)
class EvidenceItem:
    """One sentence of an answer and what the assessor found in it for one claim (or, when
    denied, for every claim it denied there): the words, the rules that matched them."""

    slugs: tuple[str, ...]
    sentence: str
    words: tuple[str, ...]
    rules: tuple[EvidenceRule, ...]
    denied: bool
    stance: str

    @property
    def slug(self) -> str:
        return self.slugs[0]

    @property
    def sentence_html(self) -> str:
        """The sentence, escaped, with the words that counted marked."""
        return _marked(self.sentence, self.words)


def _marked(sentence: str, words: tuple[str, ...]) -> str:
    spans: list[tuple[int, int]] = []
    lowered = sentence.casefold()
    for word in words:
        start = lowered.find(word.casefold()) if word else -1
        if start >= 0:
            spans.append((start, start + len(word)))
    parts: list[Any] = []
    at = 0
    for start, end in sorted(spans):
        if start < at:  # overlapping hits: the first one shown wins
            continue
        parts.append(escape(sentence[at:start]))
        parts.append(format_html("<mark>{}</mark>", sentence[start:end]))
        at = end
    parts.append(escape(sentence[at:]))
    # Each piece is already escaped (SafeString), so joining does not escape it twice.
    return format_html_join("", "{}", ((part,) for part in parts))


def _as_dict(item: assessment.Evidence | Mapping[str, Any]) -> Mapping[str, Any]:
    return item.as_dict() if isinstance(item, assessment.Evidence) else item


def evidence_items(
    evidence: Iterable[assessment.Evidence | Mapping[str, Any]],
) -> list[EvidenceItem]:
    """Evidence (as stored with an attempt, or fresh) grouped the way a reader takes it: what
    counted, one item per claim and sentence; what was read as denied, one item per sentence,
    naming every claim denied there. Attempts stored before rules were recorded have none."""
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for raw in evidence:
        item = _as_dict(raw)
        slug = str(item.get("slug", ""))
        sentence = str(item.get("sentence") or item.get("matched") or "")
        denied = bool(item.get("negated"))
        key = ("denied", sentence) if denied else ("counted", slug, sentence)
        group = groups.setdefault(
            key,
            {"slugs": [], "words": [], "rules": [], "stance": str(item.get("stance", ""))},
        )
        if slug not in group["slugs"]:
            group["slugs"].append(slug)
        matched = str(item.get("matched") or "")
        if matched and matched not in group["words"]:
            group["words"].append(matched)
        rule = EvidenceRule(str(item.get("via") or ""), str(item.get("rule") or ""))
        if rule.rule and rule not in group["rules"]:
            group["rules"].append(rule)
    return [
        EvidenceItem(
            slugs=tuple(g["slugs"]),
            sentence=key[-1],
            words=tuple(g["words"]),
            rules=tuple(g["rules"]),
            denied=key[0] == "denied",
            stance=g["stance"],
        )
        for key, g in groups.items()
    ]


@dataclass(frozen=True)
class KeyPointEvidence:
    slug: str
    label_html: str
    covered: bool
    # What earned it; for a missed one, the sentences where it was read as denied.
    items: tuple[EvidenceItem, ...]


@dataclass(frozen=True)
class AnswerEvidence:
    """Why an answer earned what it did: per key point, for the wrong answer it resembles,
    and what was read as denied or refuted (once per sentence)."""

    key_points: tuple[KeyPointEvidence, ...]
    wrong_answer: tuple[EvidenceItem, ...]
    denied: tuple[EvidenceItem, ...]

    @property
    def covered(self) -> tuple[str, ...]:
        return tuple(kp.slug for kp in self.key_points if kp.covered)


def answer_evidence(
    *,
    key_points: Iterable[KeyPoint],
    covered: Iterable[str],
    wrong_answer: str | None,
    evidence: Iterable[assessment.Evidence | Mapping[str, Any]],
) -> AnswerEvidence:
    items = evidence_items(evidence)
    covered = set(covered)
    counted = [i for i in items if not i.denied]
    denied = [i for i in items if i.denied]
    rows = []
    for kp in key_points:
        if kp.slug in covered:
            mine = [i for i in counted if i.slug == kp.slug]
        else:
            mine = [i for i in denied if kp.slug in i.slugs]
        rows.append(
            KeyPointEvidence(kp.slug, render_inline(kp.label), kp.slug in covered, tuple(mine))
        )
    return AnswerEvidence(
        key_points=tuple(rows),
        wrong_answer=tuple(i for i in counted if wrong_answer and i.slug == wrong_answer),
        denied=tuple(denied),
    )


def attempt_evidence(
    *, page: QuestionPage, content: QuestionContent | None = None
) -> AnswerEvidence | None:
    """The evidence of the latest answer shown on a question page (None before one)."""
    attempt = page.progress.question_attempt
    if attempt is None:
        return None
    data = attempt.assessment or {}
    key_points = content.key_points if content else list(page.question.key_points.all())
    return answer_evidence(
        key_points=[kp for kp in key_points if kp.follow_up_id is None],
        covered=data.get("key_points", []),
        wrong_answer=data.get("wrong_answer"),
        evidence=data.get("evidence", []),
    )
