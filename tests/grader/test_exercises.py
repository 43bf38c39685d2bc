"""grader.services.exercises and grader.selectors.exercises: the seeded exercise rows, the
spec a grade reads from them, and validating an exercise's checks."""

import pytest

from grader.engine.exercise_content import EXERCISES
from grader.models import Exercise
from grader.selectors.exercises import exercise_spec_get
from grader.services.exercises import exercise_validate
from tests.grader.fakes import SourceLookupExecutor

pytestmark = pytest.mark.django_db

SIGNATURES = {
    "scaled-dot-product-attention": "def attention(Q, K, V, mask=None):",
    "multi-head-attention": "def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):",
    "stable-softmax": "def softmax(x, axis=-1):",
}


def test_seed_migration_created_the_three_exercises():
    for slug, signature in SIGNATURES.items():
        exercise = Exercise.objects.get(slug=slug)
        assert signature in exercise.starter_code
        assert exercise.question_slug == "why-divide-before-softmax"
        assert exercise.reference_solution.strip()
        assert exercise.is_published
        data = next(e for e in EXERCISES if e["slug"] == slug)
        assert [c.name for c in exercise.checks.all()] == [c["name"] for c in data["checks"]]


def test_spec_from_a_row_with_clamped_limits():
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    exercise.time_limit_seconds = 1000
    exercise.memory_limit_mb = 1
    spec = exercise_spec_get(exercise=exercise)
    assert spec.kind == "attention" and spec.entry_point == "attention"
    assert spec.limits.cpu_seconds == 20.0
    assert spec.limits.memory_mb == 64
    assert [c.name for c in spec.checks][:2] == ["worked-example", "shapes"]


@pytest.mark.parametrize("slug", list(SIGNATURES))
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
