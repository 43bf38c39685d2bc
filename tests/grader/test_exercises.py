"""grader.services.exercises and grader.selectors.exercises: the seeded exercise rows, the
spec a grade reads from them, and validating an exercise's checks."""

import re

import pytest
from django.http import Http404
from django.test import Client
from rest_framework.test import APIClient

from grader.engine.exercise_content import EXERCISES
from grader.engine.sandbox import messages as M
from grader.models import Exercise
from grader.selectors.exercises import (
    exercise_get_submittable,
    exercise_limits,
    exercise_limits_text,
    exercise_spec_get,
)
from grader.services.exercises import exercise_validate
from tests.grader.fakes import SourceLookupExecutor

pytestmark = pytest.mark.django_db

SIGNATURES = {
    "scaled-dot-product-attention": "def attention(Q, K, V, mask=None):",
    "multi-head-attention": "def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):",
    "stable-softmax": "def softmax(x, axis=-1):",
    "softmax-backward": "def softmax_backward(p, g):",
    "scaling-demonstration": "def scaling_demo(d_k, rng_seed, n=16):",
    "attention-backward": "def attention_backward(Q, K, V, dO, mask=None):",
}


def test_seed_migrations_created_the_built_in_exercises():
    for slug, signature in SIGNATURES.items():
        exercise = Exercise.objects.get(slug=slug)
        assert signature in exercise.starter_code
        assert exercise.question_slug == "why-divide-before-softmax"
        assert exercise.reference_solution.strip()
        assert exercise.is_published
        data = next(e for e in EXERCISES if e["slug"] == slug)
        assert [c.name for c in exercise.checks.all()] == [c["name"] for c in data["checks"]]


def test_the_softmax_backward_row_has_its_own_kind():
    exercise = Exercise.objects.get(slug="softmax-backward")
    assert exercise.kind == Exercise.Kind.SOFTMAX_BACKWARD == "softmax_backward"
    assert exercise.get_kind_display() == "Softmax backward"
    assert exercise.entry_point == "softmax_backward" and exercise.order == 4


def test_the_demonstration_row_has_its_own_kind():
    exercise = Exercise.objects.get(slug="scaling-demonstration")
    assert exercise.kind == Exercise.Kind.DEMONSTRATION == "demonstration"
    assert exercise.get_kind_display() == "The ten-minute demonstration"
    assert exercise.entry_point == "scaling_demo" and exercise.order == 5


def test_the_attention_backward_row_has_its_own_kind():
    exercise = Exercise.objects.get(slug="attention-backward")
    assert exercise.kind == Exercise.Kind.ATTENTION_BACKWARD == "attention_backward"
    assert exercise.get_kind_display() == "Attention backward"
    assert exercise.entry_point == "attention_backward" and exercise.order == 6


def test_a_submit_reads_its_exercise_without_the_statement_and_the_solution(
    django_assert_num_queries,
):
    with django_assert_num_queries(1):
        exercise = exercise_get_submittable(slug="stable-softmax")
        assert exercise.slug == "stable-softmax" and exercise.is_published
        assert "def softmax(x, axis=-1):" in exercise.starter_code
    assert {"statement", "reference_solution"} <= exercise.get_deferred_fields()


def test_a_submit_finds_no_unpublished_or_unknown_exercise():
    Exercise.objects.filter(slug="stable-softmax").update(is_published=False)
    for slug in ("stable-softmax", "no-such-exercise"):
        with pytest.raises(Http404):
            exercise_get_submittable(slug=slug)


def test_spec_from_a_row_with_clamped_limits():
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    exercise.time_limit_seconds = 1000
    exercise.memory_limit_mb = 1
    spec = exercise_spec_get(exercise=exercise)
    assert spec.kind == "attention" and spec.entry_point == "attention"
    assert spec.limits.cpu_seconds == 20.0
    assert spec.limits.memory_mb == 64
    assert [c.name for c in spec.checks][:2] == ["worked-example", "shapes"]


# The demonstration's is the longest by far (its hidden heads are up to 262,144 wide), so the
# inner loop leaves it to `make test` (tests/grader/test_diagnosis.py still names each of its
# mistakes there).
@pytest.mark.parametrize(
    "slug",
    [
        pytest.param(s, marks=pytest.mark.slow) if s == "scaling-demonstration" else s
        for s in SIGNATURES
    ],
)
def test_validate_service_reference_passes_and_every_misconception_is_caught(slug):
    exercise = Exercise.objects.get(slug=slug)
    report = exercise_validate(exercise=exercise, executor=SourceLookupExecutor())
    assert report.reference_passed, report.reference
    assert report.uncaught == ()
    assert report.unnamed == ()
    assert report.ok


def test_validate_flags_a_misconception_no_check_catches():
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    exercise.checks.exclude(name="no-mutation").delete()
    report = exercise_validate(exercise=exercise, executor=SourceLookupExecutor())
    assert report.reference_passed
    assert "missing-scale" in report.uncaught
    assert "mutates-input" not in report.uncaught
    assert not report.ok


@pytest.mark.parametrize(
    "cpu,memory,text",
    [
        (5.0, 512, "5 s of CPU time (10 s of wall-clock time), 512 MB of memory"),
        (2.5, 256, "2.5 s of CPU time (5 s of wall-clock time), 256 MB of memory"),
        # Clamped: 20 s of CPU at most, and the wall clock's 30 s cap under twice that.
        (1000, 1, "20 s of CPU time (30 s of wall-clock time), 64 MB of memory"),
    ],
)
def test_the_limits_are_stated_from_the_limits_the_sandbox_gets(cpu, memory, text):
    exercise = Exercise.objects.get(slug="stable-softmax")
    exercise.time_limit_seconds, exercise.memory_limit_mb = cpu, memory
    exercise.save()
    limits = exercise_limits(exercise=exercise)
    assert exercise_spec_get(exercise=exercise).limits == limits
    assert exercise_limits_text(exercise=exercise) == text
    # The timeout messages name the same values in the same words.
    cpu_text = M.CPU_TIME.format(seconds=limits.cpu_seconds)
    wall_text = M.WALL_TIME.format(seconds=limits.wall_seconds)
    assert cpu_text in text and cpu_text in M.MSG_CPU_LIMIT.format(seconds=limits.cpu_seconds)
    assert wall_text in text and wall_text in M.MSG_WALL_LIMIT.format(seconds=limits.wall_seconds)

    page = Client().get(exercise.get_absolute_url()).content.decode()
    assert f"Limits: {text}." in page
    api = APIClient().get(f"/api/exercises/{exercise.slug}/").json()["limits"]
    assert api == {
        "cpu_seconds": limits.cpu_seconds,
        "wall_seconds": limits.wall_seconds,
        "memory_mb": limits.memory_mb,
        "text": text,
    }


@pytest.mark.parametrize("slug", list(SIGNATURES))
def test_no_statement_types_a_limit_into_its_text(slug):
    # The page states the limits from the exercise's values; a number in the statement would
    # go stale the day an instructor changes them.
    statement = Exercise.objects.get(slug=slug).statement
    assert not re.search(r"\d\s*(s|seconds?|MB)\b|CPU time|wall.clock", statement), statement
