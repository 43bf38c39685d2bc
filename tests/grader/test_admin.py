"""grader.admin: the exercise admin (its check form, limits, Validate) and the read-only
submission admin."""

import numpy as np
import pytest
from django.urls import reverse

from grader import admin as grader_admin
from grader.admin import ExerciseCheckForm
from grader.engine.checks import custom
from grader.engine.validation import CELL_ERROR
from grader.models import Exercise, ExerciseCheck, ExerciseValidation
from grader.services.exercises import exercise_validation_run
from tests.factories import instructor_create
from tests.grader.fakes import SourceLookupExecutor

pytestmark = pytest.mark.django_db


@pytest.fixture
def instructor(db):
    return instructor_create(username="teacher", password="pw-teacher-123")


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


# --- the custom check: its source box, checked on save, and Validate showing it --------------

ROWS_SUM_TO_ONE = (
    "import numpy as np\n\n\ndef check(student, expected, x, *rest):\n"
    "    return bool(np.allclose(student.sum(axis=-1), 1.0))\n"
)


def _custom_form(exercise, *, name="custom", source=ROWS_SUM_TO_ONE, params="{}", instance=None):
    return ExerciseCheckForm(
        data={
            "name": name,
            "label": "Rows sum to 1",
            "params": params,
            "source": source,
            "weight": 1,
            "visibility": "shown",
            "order": 5,
        },
        instance=instance or ExerciseCheck(exercise=exercise),
    )


def test_a_custom_checks_source_is_saved_into_its_params():
    exercise = Exercise.objects.get(slug="stable-softmax")
    form = _custom_form(exercise, params='{"message": "On {what}, rows must sum to 1."}')
    assert form.is_valid(), form.errors
    row = form.save()
    assert row.params == {"message": "On {what}, rows must sum to 1.", "source": ROWS_SUM_TO_ONE}
    crlf = _custom_form(exercise, source=ROWS_SUM_TO_ONE.replace("\n", "\r\n"))
    assert crlf.is_valid(), crlf.errors
    assert crlf.cleaned_data["params"]["source"] == ROWS_SUM_TO_ONE  # as a browser sends it
    # Editing it again shows the source in its box.
    again = ExerciseCheckForm(instance=row)
    assert again.initial["source"] == ROWS_SUM_TO_ONE
    assert again.initial["params"] == {"message": "On {what}, rows must sum to 1."}


@pytest.mark.parametrize(
    "source,params,field,error",
    [
        (
            "def check(a, b):\n    return (\n",
            "{}",
            "source",
            custom.MSG_SOURCE_SYNTAX.format(line=2, error="'(' was never closed"),
        ),
        ("def judge(a, b):\n    return 1\n", "{}", "source", custom.MSG_SOURCE_NO_ENTRY),
        ("", "{}", "params", "source: required"),
        ("", '{"source": ""}', "params", custom.MSG_SOURCE_EMPTY),
        (
            ROWS_SUM_TO_ONE,
            '{"inputs": "nope"}',
            "params",
            custom.MSG_INPUTS_UNKNOWN.format(name="nope"),
        ),
    ],
)
def test_a_broken_custom_check_is_refused_on_save(source, params, field, error):
    exercise = Exercise.objects.get(slug="stable-softmax")
    form = _custom_form(exercise, source=source, params=params)
    assert not form.is_valid()
    assert form.errors[field] == [error]


def test_only_the_custom_check_takes_a_source():
    exercise = Exercise.objects.get(slug="stable-softmax")
    form = _custom_form(exercise, name="softmax-axis")
    assert not form.is_valid()
    assert form.errors["source"] == [grader_admin.MSG_SOURCE_NOT_CUSTOM]


def test_validate_shows_a_custom_check_catching_and_a_broken_one_as_an_error(client, instructor):
    def rows_sum_to_one(student, expected, x, *rest):
        return bool(np.allclose(student.sum(axis=-1), 1.0))

    def broken(student, expected, *inputs):
        raise ValueError("the instructor's bug")

    client.force_login(instructor)
    exercise = Exercise.objects.get(slug="stable-softmax")
    broken_source = ROWS_SUM_TO_ONE.replace("bool(", "(1 / 0) and bool(")
    ExerciseCheck.objects.create(
        exercise=exercise,
        name="custom",
        label="Rows sum to 1",
        order=90,
        params={"source": ROWS_SUM_TO_ONE},
    )
    url = reverse("admin:grader_exercise_validate", kwargs={"pk": exercise.pk})
    fake = SourceLookupExecutor(extra={ROWS_SUM_TO_ONE: rows_sum_to_one, broken_source: broken})
    client.post(url)
    exercise_validation_run(validation_id=ExerciseValidation.objects.get().pk, executor=fake)
    report = ExerciseValidation.objects.get().report
    column = report["check_labels"].index("Rows sum to 1")
    row = next(r for r in report["rows"] if r["implementation"] == "softmax_unnormalized")
    assert row["cells"][column] is True
    assert report["reference_cells"][column] is True
    assert report["check_errors"] == []

    ExerciseCheck.objects.filter(name="custom").update(params={"source": broken_source})
    client.post(url)
    latest = ExerciseValidation.objects.order_by("-pk").first()
    exercise_validation_run(validation_id=latest.pk, executor=fake)
    html = client.get(url).content.decode()
    assert 'id="check-errors"' in html
    assert "the instructor&#x27;s bug" in html
    report = ExerciseValidation.objects.order_by("-pk").first().report
    assert report["reference_cells"][column] == CELL_ERROR
    assert report["check_errors"][0]["check"] == "Rows sum to 1"
