"""How well the assessor judges labelled answers. Pure Python: no Django imports.

`evaluate(cases, specs)` runs the assessor on every labelled case and compares what it found
with what the case's author says the answer really states. The same function backs
`manage.py assess_eval` (on the jsonl evaluation set), the floor test in CI and the admin's
Validate action (on a question's example answers), so the three always agree.

A case targets either the question itself ("question") or one of its free-text follow-ups
("follow-up:<ordering>", 0-based as content_load assigns it). Follow-ups have no wrong
answers: they are assessed with their own key points only, exactly as candidates get them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from questions import assessment

QUESTION_TARGET = "question"
FOLLOW_UP_PREFIX = "follow-up:"
# The labelled evaluation set: questions/eval/<question-slug>.jsonl.
EVAL_DIR = Path(__file__).resolve().parent / "eval"
SPLITS = ("dev", "heldout")
EVAL_FIELDS = frozenset({"id", "target", "text", "key_points", "wrong_answer", "register", "split"})
BAD_EVAL_LINE = "{source}:{line}: {error}"


@dataclass(frozen=True)
class EvalCase:
    """One labelled answer: what the text really states, as an interviewer reads it."""

    text: str
    target: str = QUESTION_TARGET
    key_points: tuple[str, ...] = ()
    wrong_answer: str | None = None
    id: str = ""
    register: str = ""
    split: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalCase:
        """From a jsonl line or any mapping with the same field names."""
        return cls(
            text=str(data["text"]),
            target=str(data.get("target") or QUESTION_TARGET),
            key_points=tuple(data.get("key_points") or ()),
            wrong_answer=data.get("wrong_answer") or None,
            id=str(data.get("id", "")),
            register=str(data.get("register", "")),
            split=str(data.get("split", "")),
        )


@dataclass(frozen=True)
class TargetSpecs:
    """What a target is assessed with: the specs the models' `as_spec()` produce."""

    key_points: Sequence[assessment.KeyPointSpec]
    wrong_answers: Sequence[assessment.WrongAnswerSpec] = ()
    # The labelled example answers the meaning reader learns from (the question's own).
    examples: Sequence[assessment.ExampleSpec] = ()


@dataclass(frozen=True)
class Scores:
    """Precision, recall and F1 of one decision (a key point or a wrong answer)."""

    target: str
    slug: str
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def support(self) -> int:
        return self.tp + self.fn

    @property
    def precision(self) -> float:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float:
        return _ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    def as_dict(self) -> dict[str, object]:
        return {
            "target": self.target,
            "slug": self.slug,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "support": self.support,
            "precision": round(self.precision, 3),
            "recall": round(self.recall, 3),
            "f1": round(self.f1, 3),
        }


@dataclass(frozen=True)
class Misjudged:
    """A case the assessor got wrong, with the sentences that made it decide."""

    case: EvalCase
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    expected_wrong_answer: str | None
    got_wrong_answer: str | None
    evidence: tuple[assessment.Evidence, ...]

    @property
    def false_rebuttal(self) -> bool:
        return self.got_wrong_answer is not None and self.got_wrong_answer != (
            self.expected_wrong_answer
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.case.id,
            "target": self.case.target,
            "register": self.case.register,
            "text": self.case.text,
            "missing": list(self.missing),
            "extra": list(self.extra),
            "expected_wrong_answer": self.expected_wrong_answer,
            "got_wrong_answer": self.got_wrong_answer,
            "false_rebuttal": self.false_rebuttal,
            "evidence": [e.as_dict() for e in self.evidence],
        }


@dataclass(frozen=True)
class EvalReport:
    cases: int
    key_points: list[Scores]
    wrong_answers: list[Scores]
    # Over the cases whose target has wrong answers (follow-ups have none).
    wrong_answer_cases: int
    wrong_answer_correct: int
    false_rebuttals: int
    misjudged: list[Misjudged] = field(default_factory=list)

    @property
    def key_point_micro_f1(self) -> float:
        tp = sum(s.tp for s in self.key_points)
        fp = sum(s.fp for s in self.key_points)
        fn = sum(s.fn for s in self.key_points)
        return _ratio(2 * tp, 2 * tp + fp + fn)

    @property
    def wrong_answer_accuracy(self) -> float:
        return _ratio(self.wrong_answer_correct, self.wrong_answer_cases)

    @property
    def exact(self) -> int:
        """Cases judged fully right: every key point and the wrong answer (or none)."""
        return self.cases - len(self.misjudged)

    def as_dict(self) -> dict[str, object]:
        return {
            "cases": self.cases,
            "exact": self.exact,
            "key_point_micro_f1": round(self.key_point_micro_f1, 3),
            "wrong_answer_accuracy": round(self.wrong_answer_accuracy, 3),
            "wrong_answer_cases": self.wrong_answer_cases,
            "false_rebuttals": self.false_rebuttals,
            "key_points": [s.as_dict() for s in self.key_points],
            "wrong_answers": [s.as_dict() for s in self.wrong_answers],
            "misjudged": [m.as_dict() for m in self.misjudged],
        }


Assess = Callable[
    [
        str,
        Sequence[assessment.KeyPointSpec],
        Sequence[assessment.WrongAnswerSpec],
        Sequence[assessment.ExampleSpec],
    ],
    assessment.TextAssessment,
]


def _ratio(num: float, den: float) -> float:
    # An empty class (no case states it, none predicted) is perfect, not a division by zero.
    return num / den if den else 1.0


def _as_case(case: EvalCase | Mapping[str, Any]) -> EvalCase:
    return case if isinstance(case, EvalCase) else EvalCase.from_dict(case)


def evaluate(
    cases: Iterable[EvalCase | Mapping[str, Any]],
    specs: Mapping[str, TargetSpecs] | TargetSpecs,
    *,
    assess: Assess = assessment.assess_text,
) -> EvalReport:
    """Run the assessor on every case and score it against the labels.

    `specs` maps a target ("question", "follow-up:1", …) to what it is assessed with; a single
    TargetSpecs stands for every target. Cases whose target has no specs are skipped (a
    follow-up that is not free text). Key points and wrong answers are scored per target,
    since two follow-ups may reuse a slug.
    """
    kp_counts: dict[tuple[str, str], list[int]] = {}
    wa_counts: dict[tuple[str, str], list[int]] = {}
    misjudged: list[Misjudged] = []
    total = wa_cases = wa_correct = false_rebuttals = 0
    for raw in cases:
        case = _as_case(raw)
        target_specs = specs if isinstance(specs, TargetSpecs) else specs.get(case.target)
        if target_specs is None:
            continue
        total += 1
        result = assess(
            case.text, target_specs.key_points, target_specs.wrong_answers, target_specs.examples
        )
        got = set(result.key_points)
        want = set(case.key_points)
        for point in target_specs.key_points:
            counts = kp_counts.setdefault((case.target, point.slug), [0, 0, 0])
            if point.slug in got and point.slug in want:
                counts[0] += 1
            elif point.slug in got:
                counts[1] += 1
            elif point.slug in want:
                counts[2] += 1
        if target_specs.wrong_answers:
            wa_cases += 1
            wa_correct += result.wrong_answer == case.wrong_answer
            for wrong in target_specs.wrong_answers:
                counts = wa_counts.setdefault((case.target, wrong.slug), [0, 0, 0])
                is_got = result.wrong_answer == wrong.slug
                is_want = case.wrong_answer == wrong.slug
                if is_got and is_want:
                    counts[0] += 1
                elif is_got:
                    counts[1] += 1
                elif is_want:
                    counts[2] += 1
        rebutted_wrongly = result.wrong_answer is not None and result.wrong_answer != (
            case.wrong_answer
        )
        false_rebuttals += rebutted_wrongly
        if got != want or result.wrong_answer != case.wrong_answer:
            misjudged.append(
                Misjudged(
                    case=case,
                    missing=tuple(sorted(want - got)),
                    extra=tuple(sorted(got - want)),
                    expected_wrong_answer=case.wrong_answer,
                    got_wrong_answer=result.wrong_answer,
                    evidence=tuple(result.evidence),
                )
            )
    return EvalReport(
        cases=total,
        key_points=[Scores(t, s, *c) for (t, s), c in kp_counts.items()],
        wrong_answers=[Scores(t, s, *c) for (t, s), c in wa_counts.items()],
        wrong_answer_cases=wa_cases,
        wrong_answer_correct=wa_correct,
        false_rebuttals=false_rebuttals,
        misjudged=misjudged,
    )


def report_lines(report: EvalReport, *, title: str = "") -> list[str]:
    """The human-readable table the command prints."""
    lines = [title] if title else []
    lines.append(
        f"cases {report.cases}  fully right {report.exact}  "
        f"key-point micro F1 {report.key_point_micro_f1:.3f}  "
        f"wrong-answer accuracy {report.wrong_answer_accuracy:.3f} "
        f"(of {report.wrong_answer_cases})  false rebuttals {report.false_rebuttals}"
    )
    names = [f"{s.target}/{s.slug}" for s in (*report.key_points, *report.wrong_answers)]
    width = max((len(n) for n in names), default=12)
    header = f"  {'target/slug':<{width}} {'n':>4} {'P':>6} {'R':>6} {'F1':>6}"
    for name, rows in (("key points", report.key_points), ("wrong answers", report.wrong_answers)):
        if not rows:
            continue
        lines.append(f" {name}")
        lines.append(header)
        for s in rows:
            lines.append(
                f"  {s.target + '/' + s.slug:<{width}} {s.support:>4} "
                f"{s.precision:>6.3f} {s.recall:>6.3f} {s.f1:>6.3f}"
            )
    return lines


def follow_up_target(ordering: int) -> str:
    """The target name of a follow-up, by its 0-based position in the question's list."""
    return f"{FOLLOW_UP_PREFIX}{ordering}"


def eval_cases_parse(text: str, *, source: str = "<text>") -> list[EvalCase]:
    """The cases of one .jsonl file; raises ValueError naming the file and line at fault."""
    cases = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict) or set(data) != EVAL_FIELDS:
                raise ValueError(f"fields must be exactly {sorted(EVAL_FIELDS)}")
            if data["split"] not in SPLITS:
                raise ValueError(f"split must be one of {SPLITS}")
            cases.append(EvalCase.from_dict(data))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(BAD_EVAL_LINE.format(source=source, line=number, error=exc)) from exc
    return cases


def eval_set_read(directory: Path = EVAL_DIR) -> dict[str, list[EvalCase]]:
    """Question slug -> its labelled cases, for every .jsonl file in the directory."""
    return {
        path.stem: eval_cases_parse(path.read_text(encoding="utf-8"), source=path.name)
        for path in sorted(directory.glob("*.jsonl"))
    }


def evaluate_questions(
    cases_by_question: Mapping[str, Sequence[EvalCase]],
    specs_by_question: Mapping[str, Mapping[str, TargetSpecs]],
    *,
    split: str | None = None,
) -> tuple[EvalReport, dict[str, EvalReport]]:
    """The report over several questions at once, and one per question.

    Targets are prefixed with the question slug ("why-divide-before-softmax/question") so
    that the same key-point slug in two questions stays two rows. Questions without specs
    (not in the database) are left out; `split` keeps only the cases of that split.
    """
    combined_cases: list[EvalCase] = []
    combined_specs: dict[str, TargetSpecs] = {}
    per_question: dict[str, EvalReport] = {}
    for slug, cases in cases_by_question.items():
        specs = specs_by_question.get(slug)
        if specs is None:
            continue
        chosen = [c for c in cases if split is None or c.split == split]
        per_question[slug] = evaluate(chosen, specs)
        combined_cases.extend(replace(c, target=f"{slug}/{c.target}") for c in chosen)
        combined_specs.update({f"{slug}/{t}": s for t, s in specs.items()})
    return evaluate(combined_cases, combined_specs), per_question


# --- Cross-validation on a question's own example answers -----------------------------------

CROSS_VALIDATION_FOLDS = 5


@dataclass(frozen=True)
class CrossValidation:
    """How well the assessor judges a question's example answers when each is assessed by
    specs that learned only from the other folds: what it would do on answers it never saw."""

    n: int
    folds: int
    key_point_f1: float
    wrong_answer_accuracy: float
    false_rebuttals: int

    def as_dict(self) -> dict[str, object]:
        return {
            "n": self.n,
            "folds": self.folds,
            "key_point_f1": round(self.key_point_f1, 3),
            "wrong_answer_accuracy": round(self.wrong_answer_accuracy, 3),
            "false_rebuttals": self.false_rebuttals,
        }


def cross_validate(
    specs: TargetSpecs,
    *,
    folds: int = CROSS_VALIDATION_FOLDS,
    assess: Assess = assessment.assess_text,
) -> CrossValidation:
    """Assess each of `specs.examples` with the examples of the other folds only (fold = its
    position modulo `folds`, so the same examples always give the same figures), and score
    every fold's verdicts together."""
    examples = list(specs.examples)
    folds = max(1, min(folds, len(examples)))
    tp = fp = fn = cases = correct = false_rebuttals = 0
    for fold in range(folds):
        held = [e for i, e in enumerate(examples) if i % folds == fold]
        rest = tuple(e for i, e in enumerate(examples) if i % folds != fold)
        report = evaluate(
            [
                EvalCase(e.text, key_points=e.key_points, wrong_answer=e.wrong_answer or None)
                for e in held
            ],
            replace(specs, examples=rest),
            assess=assess,
        )
        tp += sum(s.tp for s in report.key_points)
        fp += sum(s.fp for s in report.key_points)
        fn += sum(s.fn for s in report.key_points)
        cases += report.wrong_answer_cases
        correct += report.wrong_answer_correct
        false_rebuttals += report.false_rebuttals
    return CrossValidation(
        n=len(examples),
        folds=folds if examples else 0,
        key_point_f1=_ratio(2 * tp, 2 * tp + fp + fn),
        wrong_answer_accuracy=_ratio(correct, cases),
        false_rebuttals=false_rebuttals,
    )
