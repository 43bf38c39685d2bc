"""A check's label, its inputs and its messages come from the same parameter values.

For every check of every seeded exercise: the label names no size the check does not test, and
each failure message names the input it was about, in the terms of the label.
"""

import re
from dataclasses import replace

import numpy as np
import pytest

from grader.engine import messages, reference
from grader.engine.checks import check_get
from grader.engine.checks.attention import WorkedExample
from grader.engine.checks.base import and_list
from grader.engine.checks.common import Stability
from grader.engine.executors.base import CallResult, RunRequest
from grader.engine.executors.trusted import CallableExecutor
from grader.engine.exercise_content import EXERCISES
from grader.engine.grading import CheckSpec

REFERENCES = {
    reference.KIND_ATTENTION: reference.attention,
    reference.KIND_MULTI_HEAD: reference.multi_head_attention,
    reference.KIND_SOFTMAX: reference.softmax,
    reference.KIND_SOFTMAX_BACKWARD: reference.softmax_backward,
    reference.KIND_ATTENTION_BACKWARD: reference.attention_backward,
    reference.KIND_DEMONSTRATION: reference.scaling_demonstration,
}

SEEDED = [
    pytest.param(exercise["kind"], spec, id=f"{exercise['slug']}:{spec['name']}")
    for exercise in EXERCISES
    for spec in exercise["checks"]
]

# A size as labels and messages state one: "d_k = 512", "about 1000", "8 heads", "3 tokens".
_SIZE = re.compile(r"(?:= |about )(\d+(?:\.\d+)?)|(\d+) (?:heads|tokens)")
_MAGNITUDE = re.compile(r"magnitude about (\d+(?:\.\d+)?)")
_ERROR = "ValueError: boom"


def _prepared(kind, name, params, seed=0):
    check = check_get(name)
    cleaned = check.clean_params(params)
    probes = check.prepare(cleaned, np.random.default_rng(seed), kind)
    run = CallableExecutor(REFERENCES[kind]).run(RunRequest("", "f", tuple(p.call for p in probes)))
    return check, cleaned, probes, list(run.calls)


def _failing(check, cleaned, probes, good, i, bad, kind):
    results = list(good)
    results[i] = bad
    return check.judge(cleaned, probes, results, kind)


@pytest.mark.parametrize("kind,spec", SEEDED)
def test_every_failure_message_names_its_input(kind, spec):
    check, cleaned, probes, good = _prepared(kind, spec["name"], spec["params"])
    assert check.judge(cleaned, probes, good, kind).passed
    for i, probe in enumerate(probes):
        outcome = _failing(check, cleaned, probes, good, i, CallResult(error=_ERROR), kind)
        assert not outcome.passed
        assert f"n {probe.what}, your function raised" in outcome.message  # On … or: on …
        if spec["name"] == "no-mutation":
            continue  # a NaN output says nothing about mutation
        nan = CallResult(output=np.full_like(good[i].output, np.nan, dtype=np.float64))
        outcome = _failing(check, cleaned, probes, good, i, nan, kind)
        assert not outcome.passed
        assert messages.NOT_FINITE.format(what=probe.what) in outcome.message


@pytest.mark.parametrize("kind,spec", SEEDED)
def test_the_label_names_only_sizes_the_check_tests(kind, spec):
    check, cleaned, probes, _ = _prepared(kind, spec["name"], spec["params"])
    label = CheckSpec(name=spec["name"], params=spec["params"], label=spec["label"]).label_shown()
    assert label == (spec["label"] or check.label_for(cleaned))
    tested = {"".join(m) for probe in probes for m in _SIZE.findall(probe.what)}
    assert {"".join(m) for m in _SIZE.findall(label)} <= tested, (label, tested)


@pytest.mark.parametrize("kind,spec", SEEDED)
def test_every_magnitude_in_a_message_is_in_the_label(kind, spec):
    # The mismatch this guards: "Large scores and float32 inputs" failing on "scores of
    # magnitude about 1", a size the label did not name.
    check, cleaned, probes, _ = _prepared(kind, spec["name"], spec["params"])
    label = check.label_for(cleaned)
    for probe in probes:
        for size in _MAGNITUDE.findall(probe.what):
            assert f"about {size}" in label or f"{size} " in label or f"{size})" in label, (
                label,
                probe.what,
            )
        if "float32" in probe.what:
            assert "float32" in label


@pytest.mark.parametrize("kind", sorted(REFERENCES))
def test_stability_label_follows_its_params(kind):
    params = {"magnitudes": [2000.0, 5e4], "float32": False}
    check, cleaned, probes, good = _prepared(kind, "stability", params)
    label = check.label_for(cleaned)
    assert label == messages.STABILITY_LABEL.format(magnitudes="2000 and 50000")
    assert [p.what.startswith("float64 ") for p in probes] == [True, True]
    assert "about 2000" in probes[0].what and "about 50000" in probes[1].what

    check, cleaned, probes, good = _prepared(kind, "stability", {})
    label = check.label_for(cleaned)
    assert label == messages.STABILITY_LABEL_FLOAT32.format(
        magnitudes="1000 and 10000", size32=Stability.FLOAT32_SCORE_SIZE
    )
    float32 = probes[-1]
    assert float32.what.startswith("float32 ")
    assert f"magnitude about {Stability.FLOAT32_SCORE_SIZE:g}" in float32.what
    bad = CallResult(output=np.full_like(good[-1].output, np.nan))
    outcome = _failing(check, cleaned, probes, good, len(probes) - 1, bad, kind)
    assert outcome.message == messages.NOT_FINITE.format(what=float32.what)


def test_sized_labels_follow_their_params():
    saturation = check_get("saturation")
    assert saturation.label_for(saturation.clean_params({"d_k": 256})) == (
        "No saturation at d_k = 256"
    )
    head_width = check_get("mha-head-width")
    cleaned = head_width.clean_params({"d_model": 256, "n_heads": 4})
    assert head_width.label_for(cleaned).startswith("d_model = 256 with 4 heads")
    probes = head_width.prepare(cleaned, np.random.default_rng(0), reference.KIND_MULTI_HEAD)
    assert "with 4 heads (d_head = 64)" in probes[0].what


def test_the_worked_example_is_named_from_its_arrays():
    check = WorkedExample()
    probe = check.prepare(check.clean_params({}), np.random.default_rng(0), "attention")[0]
    assert probe.what == messages.WORKED_EXAMPLE_WHAT.format(n=3, d_k=4)
    assert check.label == probe.what[0].upper() + probe.what[1:]


def test_an_instructors_label_wins_and_an_unknown_check_shows_its_name():
    assert CheckSpec(name="scale", label="Mine").label_shown() == "Mine"
    assert CheckSpec(name="no-such-check").label_shown() == "no-such-check"
    bad = CheckSpec(name="saturation", params={"d_k": "wide"})
    assert bad.label_shown() == "saturation"
    assert replace(bad, params={}).label_shown() == "No saturation at d_k = 512"


def test_and_list():
    assert [and_list(x) for x in ([], ["a"], ["a", "b"], ["a", "b", "c"])] == [
        "",
        "a",
        "a and b",
        "a, b and c",
    ]
