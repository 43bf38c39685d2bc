"""A learned contrast for wrong answers read by meaning: the experiment docs/judging.md cites.

    .venv/bin/python -m bench.meaning_contrast

Not part of `make bench`, and not used by the assessor. A wrong answer that is a near-opposite
of a key point ("the division changes which key wins" against "the order is kept") sits so near
it in a static embedding that the meaning reader's margin never clears. The contrast tried
here is learned from the labelled examples alone: per wrong answer, a ridge discriminant over
clause embeddings (the clauses that carry it against every clause of the other examples),
scored on each clause of an answer that takes the claim the way its nearest prototype does.
It diagnoses only when the reader diagnosed nothing, and only when its score clears a threshold
set by leave-one-out over the examples (the best other example's score plus a margin), which
must also recover at least half of the wrong answer's own examples. A stricter variant widens
the margin and never reads an answer that negates or reports anything.

Prints, without and with the contrast (both variants), the wrong-answer accuracy and false
rebuttals of `does-the-scale-change-the-winner` on its two held-out batches, and of every other
question stripped of its patterns and given a fixed random draw of its `dev` answers as
examples: what a question authored by meaning would get. The baseline is the reader alone.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache, partial

import numpy as np

from questions import assessment as a
from questions.assessment import meaning
from questions.assessment.free_text import _ATTRIBUTION, _NEGATORS, is_stuffing
from questions.assessment_eval import Assess, EvalCase, TargetSpecs, eval_set_read, evaluate
from questions.content_files import content_bundle

QUESTION = "does-the-scale-change-the-winner"
# Its held-out batches, by id prefix: the first 40, the blind 30, the third 40 (blind, by
# another author).
BATCHES = (("first held-out", "winner-h"), ("blind batch", "winner-b"), ("third batch", "winner-c"))
RIDGE = 0.01
THRESHOLD_MARGIN = 0.05
# The stricter variant: a wider margin, and never on an answer that negates or reports anything
# (the rule word overlap follows in free_text), since denials are what it misreads.
STRICT_MARGIN = 0.1
MIN_EXAMPLES = 3
MIN_RECOVERED = 0.5
POOL_EXAMPLES = 22
POOL_SEED = 0
_FIGURES = "  {name:<46} accuracy {accuracy:.3f} (of {n})  false rebuttals {rebuttals}"


@dataclass(frozen=True)
class Contrast:
    weights: np.ndarray
    bias: float
    centre: np.ndarray
    threshold: float | None  # None: the examples do not support it, so it never fires


def _discriminant(claim: meaning._Claim) -> tuple[np.ndarray, float, np.ndarray]:
    positives, negatives = claim.pos_vectors, claim.neg_vectors
    x = np.vstack([positives, negatives])
    y = np.r_[np.ones(len(positives)), -np.ones(len(negatives))]
    # Each side weighs the same, however many clauses it has.
    w = np.r_[
        np.full(len(positives), 1 / len(positives)), np.full(len(negatives), 1 / len(negatives))
    ]
    centre = x.mean(0)
    xc = x - centre
    weights = np.linalg.solve(
        (xc * w[:, None]).T @ xc + RIDGE * np.eye(x.shape[1]), (xc * w[:, None]).T @ y
    )
    bias = (
        -float(((positives - centre) @ weights).mean() + ((negatives - centre) @ weights).mean())
        / 2
    )
    return weights, bias, centre


def _score(
    claim: meaning._Claim, model: tuple[np.ndarray, float, np.ndarray], text: str
) -> tuple[float, int | None, list[meaning._Unit]]:
    weights, bias, centre = model
    units = meaning._units(text)
    vectors = meaning.embed([u.text for u in units])
    best: tuple[float, int | None] = (-np.inf, None)
    for i, unit in enumerate(units):
        nearest = int(np.argmax(claim.pos_vectors @ vectors[i]))
        if not meaning._compatible(unit.markers, claim.positives[nearest].markers):
            continue
        score = float((vectors[i] - centre) @ weights + bias)
        if score > best[0]:
            best = (score, i)
    return best[0], best[1], units


def _index(specs: TargetSpecs, examples: Sequence[a.ExampleSpec]) -> meaning.MeaningIndex:
    return meaning.meaning_index(
        tuple(specs.key_points), tuple(specs.wrong_answers), tuple(examples)
    )


@lru_cache(maxsize=64)
def _contrasts(specs: TargetSpecs, margin: float) -> dict[str, tuple[meaning._Claim, Contrast]]:
    examples = list(specs.examples)
    index = _index(specs, examples)
    found: dict[str, tuple[meaning._Claim, Contrast]] = {}
    for wrong in specs.wrong_answers:
        if any(p.strip() for p in wrong.patterns):
            continue
        claim = index.claims[wrong.slug]
        own: list[float] = []
        others: list[float] = []
        for k, example in enumerate(examples):
            if not example.text.strip() or is_stuffing(example.text):
                continue
            held_out = _index(specs, examples[:k] + examples[k + 1 :]).claims[wrong.slug]
            score = _score(held_out, _discriminant(held_out), example.text)[0]
            (own if example.wrong_answer == wrong.slug else others).append(score)
        threshold = max(others) + margin if others else None
        recovered = sum(s >= threshold for s in own) if threshold is not None else 0
        if len(own) < MIN_EXAMPLES or recovered < max(1, MIN_RECOVERED * len(own)):
            threshold = None
        found[wrong.slug] = (claim, Contrast(*_discriminant(claim), threshold))
    return found


def with_contrast(
    text: str,
    key_points: Sequence[a.KeyPointSpec],
    wrong_answers: Sequence[a.WrongAnswerSpec],
    examples: Sequence[a.ExampleSpec],
    *,
    strict: bool = False,
) -> a.TextAssessment:
    """The reader's assessment, with the wrong answer the contrast finds when it found none."""
    result = a.assess_text(text, key_points, wrong_answers, examples)
    if result.wrong_answer is not None or result.stuffing:
        return result
    normalised = a.normalise_text(text)
    if strict and (_NEGATORS.search(normalised) or _ATTRIBUTION.search(normalised)):
        return result
    specs = TargetSpecs(tuple(key_points), tuple(wrong_answers), tuple(examples))
    best: tuple[float, str, a.Evidence] | None = None
    for slug, (claim, contrast) in _contrasts(
        specs, STRICT_MARGIN if strict else THRESHOLD_MARGIN
    ).items():
        if contrast.threshold is None:
            continue
        score, i, units = _score(claim, (contrast.weights, contrast.bias, contrast.centre), text)
        if i is None or score < contrast.threshold:
            continue
        nearest = int(np.argmax(claim.pos_vectors @ meaning.embed([units[i].text])[0]))
        evidence = meaning._evidence(claim, units[i], nearest, a.ASSERTED)
        if best is None or score > best[0]:
            best = (score, slug, evidence)
    if best is None:
        return result
    return replace(result, wrong_answer=best[1], evidence=[*result.evidence, best[2]])


def _examples(cases: Sequence[EvalCase]) -> tuple[a.ExampleSpec, ...]:
    return tuple(a.ExampleSpec(c.text, c.key_points, c.wrong_answer or "") for c in cases)


def _specs(slug: str, *, stripped: bool) -> tuple[TargetSpecs, list[EvalCase]]:
    data = content_bundle().question(slug)

    def lines(raw: str) -> tuple[str, ...]:
        return () if stripped else tuple(x.strip() for x in raw.splitlines() if x.strip())

    points = tuple(
        a.KeyPointSpec(k["slug"], k["label"], lines(k["patterns"])) for k in data["key_points"]
    )
    wrongs = tuple(
        a.WrongAnswerSpec(w["slug"], w["statement"], lines(w.get("patterns", "")))
        for w in data["wrong_answers"]
    )
    cases = [c for c in eval_set_read()[slug] if c.target == "question"]
    dev = [c for c in cases if c.split == "dev"]
    if stripped:
        dev = random.Random(POOL_SEED).sample(dev, min(POOL_EXAMPLES, len(dev)))
    held = [c for c in cases if c.split == "heldout"]
    return TargetSpecs(points, wrongs, _examples(dev)), held


def _line(
    name: str, cases: Sequence[EvalCase], specs: TargetSpecs, assess: Assess
) -> tuple[int, int, int]:
    report = evaluate(cases, specs, assess=assess)
    print(
        _FIGURES.format(
            name=name,
            accuracy=report.wrong_answer_accuracy,
            n=report.wrong_answer_cases,
            rebuttals=report.false_rebuttals,
        )
    )
    return report.wrong_answer_correct, report.wrong_answer_cases, report.false_rebuttals


def main() -> None:
    winner, held = _specs(QUESTION, stripped=False)
    others = [q["slug"] for q in content_bundle().questions if q["slug"] != QUESTION]
    for label, assess in (
        ("reader alone (baseline)", a.assess_text),
        ("reader and contrast", with_contrast),
        ("reader and contrast, stricter", partial(with_contrast, strict=True)),
    ):
        print(f"== {label}")
        for name, prefix in BATCHES:
            _line(
                f"{QUESTION}, {name}",
                [c for c in held if c.id.startswith(prefix)],
                winner,
                assess,
            )
        correct = total = rebuttals = 0
        for slug in others:
            specs, cases = _specs(slug, stripped=True)
            c, n, r = _line(f"{slug}, stripped", cases, specs, assess)
            correct, total, rebuttals = correct + c, total + n, rebuttals + r
        print(
            _FIGURES.format(
                name="the others together",
                accuracy=correct / total,
                n=total,
                rebuttals=rebuttals,
            )
        )


if __name__ == "__main__":
    main()
