"""The Django side: seeded exercises, selectors, services, pages and the admin."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from grader import admin as grader_admin
from grader.admin import ExerciseCheckForm
from grader.engine.exercise_content import EXERCISES
from grader.models import Exercise, ExerciseCheck, ExerciseValidation
from grader.selectors.exercises import exercise_spec_get
from grader.services.exercises import exercise_validate, exercise_validation_run
from quizsite.roles import instructors_group_sync
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


def test_exercise_pages_render_contract_and_link_back(client):
    response = client.get(reverse("grader:exercise-list"))
    assert response.status_code == 200
    for slug in SIGNATURES:
        assert f"/exercises/{slug}/" in response.content.decode()
    response = client.get(
        reverse("grader:exercise-detail", kwargs={"slug": "multi-head-attention"})
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "/questions/why-divide-before-softmax/" in html
    assert "<h3" in html and "What the hidden checks test" in html  # Markdown rendered
    assert "def multi_head_attention(" in html
    assert 'id="submit-heading"' in html or "submit" in html
    assert client.get("/exercises/nope/").status_code == 404


def test_unpublished_exercise_is_hidden(client):
    Exercise.objects.filter(slug="stable-softmax").update(is_published=False)
    assert client.get("/exercises/stable-softmax/").status_code == 404


def test_statement_is_sanitised(client):
    Exercise.objects.filter(slug="stable-softmax").update(
        statement="Hi <script>alert(1)</script> $x_i$ and **bold**"
    )
    html = client.get("/exercises/stable-softmax/").content.decode()
    assert "<script>alert(1)" not in html
    assert "<strong>bold</strong>" in html and "$x_i$" in html


@pytest.fixture
def instructor(db):
    user = get_user_model().objects.create_user("teacher", password="pw-teacher-123", is_staff=True)
    user.groups.add(instructors_group_sync())
    return user


def test_check_form_validates_params_and_kind():
    exercise = Exercise.objects.get(slug="stable-softmax")
    form = ExerciseCheckForm(
        data={
            "name": "scale",
            "label": "",
            "params": '{"d_ks": "x"}',
            "weight": 1,
            "visibility": "shown",
            "order": 0,
        },
        instance=ExerciseCheck(exercise=exercise),
    )
    assert not form.is_valid()
    assert "params" in form.errors and "name" in form.errors
    ok = ExerciseCheckForm(
        data={
            "name": "softmax-axis",
            "label": "",
            "params": "{}",
            "weight": 2,
            "visibility": "hidden",
            "order": 0,
        },
        instance=ExerciseCheck(exercise=exercise),
    )
    assert ok.is_valid(), ok.errors
    not_an_object = ExerciseCheckForm(
        data={
            "name": "softmax-axis",
            "label": "",
            "params": "[1, 2]",
            "weight": 1,
            "visibility": "shown",
            "order": 0,
        },
        instance=ExerciseCheck(exercise=exercise),
    )
    assert not not_an_object.is_valid()
    assert "params" in not_an_object.errors


def test_admin_validate_is_a_post_that_a_worker_runs(client, instructor, monkeypatch):
    import grader.engine.sandbox as sandbox

    def no_sandbox_in_the_web(*args, **kwargs):
        raise AssertionError("the web process started a sandbox")

    monkeypatch.setattr(sandbox, "SandboxExecutor", no_sandbox_in_the_web)
    client.force_login(instructor)
    exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
    url = reverse("admin:grader_exercise_validate", kwargs={"pk": exercise.pk})
    # A GET runs nothing and queues nothing.
    assert "Not validated yet." in client.get(url).content.decode()
    assert not ExerciseValidation.objects.exists()

    response = client.post(url)
    assert response.status_code == 302
    validation = ExerciseValidation.objects.get()
    assert validation.status == ExerciseValidation.Status.QUEUED
    assert 'http-equiv="refresh"' in client.get(url).content.decode()

    # The worker's side (grader.tasks.validate_exercise), with a fake executor.
    fake = SourceLookupExecutor()
    exercise_validation_run(validation_id=validation.pk, executor=fake)
    assert exercise_validation_run(validation_id=validation.pk, executor=fake) is None  # once
    html = client.get(url).content.decode()
    assert "The reference solution passes every check." in html
    assert "Every known misconception is caught by at least one check." in html
    assert 'data-code="missing-scale"' in html and 'data-code="mask-ignored"' in html
    assert 'http-equiv="refresh"' not in html


def test_admin_validate_action_queues_and_redirects(client, instructor):
    client.force_login(instructor)
    exercise = Exercise.objects.get(slug="stable-softmax")
    response = client.post(
        reverse("admin:grader_exercise_changelist"),
        {"action": "validate_action", "_selected_action": [exercise.pk]},
    )
    assert response.status_code == 302
    assert response["Location"].endswith(f"/{exercise.pk}/validate/")
    assert ExerciseValidation.objects.filter(exercise=exercise).count() == 1


def test_admin_change_form_and_limits_are_clamped(client, instructor):
    client.force_login(instructor)
    exercise = Exercise.objects.get(slug="stable-softmax")
    url = reverse("admin:grader_exercise_change", args=[exercise.pk])
    response = client.get(url)
    assert response.status_code == 200
    assert "Validate" in response.content.decode()
    form = grader_admin.ExerciseForm(
        data={
            "title": "t",
            "slug": "tmp-ex",
            "kind": "softmax",
            "entry_point": "softmax",
            "statement": "s",
            "starter_code": "c",
            "reference_solution": "r",
            "time_limit_seconds": 999,
            "memory_limit_mb": 999999,
            "order": 0,
        }
    )
    assert form.is_valid(), form.errors
    assert form.cleaned_data["time_limit_seconds"] == 20.0
    assert form.cleaned_data["memory_limit_mb"] == 2048


def test_submission_admin_is_read_only(client, instructor):
    client.force_login(instructor)
    response = client.get(reverse("admin:grader_submission_changelist") + "?status__exact=passed")
    assert response.status_code == 200
    assert client.get(reverse("admin:grader_submission_add")).status_code == 403


def test_rebuttal_links_point_at_existing_wrong_answers():
    from grader.engine.misconceptions import MISCONCEPTIONS, QUESTION_SLUG
    from questions.content_files import content_bundle
    from questions.selectors import wrong_answer_url

    Q003 = content_bundle().question(QUESTION_SLUG)  # KeyError if the slug changed
    wrong_slugs = {w["slug"] for w in Q003["wrong_answers"]}
    for m in MISCONCEPTIONS.values():
        if m.wrong_answer_slug:
            assert m.wrong_answer_slug in wrong_slugs
            assert m.rebuttal_url == wrong_answer_url(m.wrong_answer_slug)


def test_every_misconception_has_a_section_at_its_anchor_open_to_anyone(client):
    from grader.engine.misconceptions import CODES, EXPLANATIONS_PATH, MISCONCEPTIONS

    assert reverse("grader:misconception-list") == EXPLANATIONS_PATH
    page = client.get(EXPLANATIONS_PATH)  # anonymous: no interview gate before it
    assert page.status_code == 200
    html = page.content.decode()
    for code in CODES:
        m = MISCONCEPTIONS[code]
        assert f'id="{m.anchor}"' in html and f'href="#{m.anchor}"' in html
        assert m.title.replace("'", "&#x27;") in html
