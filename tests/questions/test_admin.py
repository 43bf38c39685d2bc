"""Authoring in the admin: staff only; instructors edit content, preview and publish."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from questions.models import Attempt, Question, Status

pytestmark = pytest.mark.django_db


def test_admin_is_staff_only(client: Client, alice) -> None:
    url = reverse("admin:questions_question_changelist")
    assert client.get(url).status_code == 302
    client.force_login(alice)
    assert client.get(url).status_code == 302


def test_instructor_edits_with_inlines(client: Client, instructor, question: Question) -> None:
    client.force_login(instructor)
    response = client.get(reverse("admin:questions_question_change", args=[question.pk]))
    assert response.status_code == 200
    body = response.content.decode()
    for prefix in ("follow_ups-TOTAL_FORMS", "wrong_answers-TOTAL_FORMS", "key_points-TOTAL_FORMS"):
        assert prefix in body
    assert reverse("questions:preview", kwargs={"slug": question.slug}) in body


def test_instructor_creates_and_publishes(client: Client, instructor, seed_content: None) -> None:
    client.force_login(instructor)
    data = {
        "title": "A new question",
        "slug": "a-new-question",
        "status": "draft",
        "level": "L1",
        "ordering": "5",
        "prompt": "Why?",
        "short_answer": "Because.",
        "full_answer": "Because, at length.",
        "exercise_slugs": "[]",
    }
    for prefix in ("follow_ups", "wrong_answers", "key_points"):
        data.update({f"{prefix}-TOTAL_FORMS": "0", f"{prefix}-INITIAL_FORMS": "0"})
    data.update(
        {
            "wrong_answers-TOTAL_FORMS": "1",
            "wrong_answers-0-slug": "new-wrong",
            "wrong_answers-0-statement": "It is magic.",
            "wrong_answers-0-rebuttal": "It is arithmetic.",
            "wrong_answers-0-ordering": "0",
        }
    )
    response = client.post(reverse("admin:questions_question_add"), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    question = Question.objects.get(slug="a-new-question")
    assert question.wrong_answers.get().slug == "new-wrong"
    assert "a-new-question" not in client.get(reverse("questions:list")).content.decode()
    response = client.post(
        reverse("admin:questions_question_changelist"),
        {"action": "publish", "_selected_action": [question.pk]},
    )
    assert response.status_code == 302
    assert Question.objects.get(pk=question.pk).status == Status.PUBLISHED
    assert "a-new-question" in client.get(reverse("questions:list")).content.decode()


def test_instructors_cannot_forge_attempts(instructor) -> None:
    assert instructor.has_perm("questions.change_question")
    assert instructor.has_perm("questions.add_wronganswer")
    assert instructor.has_perm("questions.view_attempt")
    assert not instructor.has_perm("questions.change_attempt")
    assert not instructor.has_perm("questions.delete_attempt")


def test_attempt_admin_is_read_only(client: Client, instructor, question: Question) -> None:
    student = get_user_model().objects.create_user(username="s", password="x-pass-123")
    attempt = Attempt.objects.create(user=student, question=question, text="t", assessment={})
    client.force_login(instructor)
    assert client.get(reverse("admin:questions_attempt_changelist")).status_code == 200
    assert (
        client.get(reverse("admin:questions_attempt_change", args=[attempt.pk])).status_code == 200
    )
    assert client.get(reverse("admin:questions_attempt_add")).status_code == 403
