"""The courses API: per-object permissions (a course is a 404 outside it, a teaching assistant
reads their course, a student their own rows), and the instructor's writes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from courses import api
from courses.models import Extension, ScoreOverride
from tests.courses.conftest import DUE
from tests.factories import course_create, submission_create, user_create

pytestmark = pytest.mark.django_db


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def base(world) -> str:
    return f"/api/courses/{world.course.slug}"


def test_courses_list_only_mine_with_my_role(world) -> None:
    course_create(title="Elsewhere")
    body = client_for(world.ta).get("/api/courses/").json()
    assert [(c["slug"], c["role"]) for c in body] == [(world.course.slug, "teaching-assistant")]
    assert APIClient().get("/api/courses/").status_code == 401


def test_a_course_is_not_found_outside_it(world) -> None:
    eve = client_for(user_create(username="eve", is_staff=True))
    for path in ("/", "/assignments/", "/gradebook/", "/extensions/", "/overrides/"):
        assert eve.get(base(world) + path).status_code == 404
    assert eve.get(f"{base(world)}/assignments/{world.assignment.pk}/").status_code == 404


def test_gradebook_staff_see_everyone_a_student_only_themselves(world) -> None:
    submission_create(user=world.ann, status="failed", score=0.5, received_at=DUE - timedelta(1))
    ta = client_for(world.ta).get(base(world) + "/gradebook/").json()
    assert [r["username"] for r in ta["rows"]] == ["ann", "bob"]
    assert ta["rows"][0]["scores"][0]["score"] == 0.5
    bob = client_for(world.bob).get(base(world) + "/gradebook/").json()
    assert [r["username"] for r in bob["rows"]] == ["bob"]
    assert bob["rows"][0]["scores"][0]["score"] is None


def test_instructor_gives_an_extension_and_a_student_reads_only_theirs(world) -> None:
    teacher = client_for(world.teacher)
    response = teacher.post(
        base(world) + "/extensions/",
        {
            "assignment": world.assignment.pk,
            "usernames": ["ann"],
            "extra_days": 2,
            "note": "ill",
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    # Paris, 1 March 23:59 + 2 days = 3 March 23:59 (UTC+1).
    assert response.json()[0]["student_due_at"] == "2026-03-03T22:59:00Z"
    assert len(client_for(world.ann).get(base(world) + "/extensions/").json()) == 1
    assert client_for(world.bob).get(base(world) + "/extensions/").json() == []
    extension = Extension.objects.get()
    assert teacher.delete(f"{base(world)}/extensions/{extension.pk}/").status_code == 204
    assert not Extension.objects.exists()


def test_teaching_assistants_and_students_cannot_write(world) -> None:
    body = {"assignment": world.assignment.pk, "usernames": ["ann"], "extra_days": 1}
    for user in (world.ta, world.ann):
        response = client_for(user).post(base(world) + "/extensions/", body, format="json")
        assert response.status_code == 403
        assert response.json()["detail"] == api.MSG_NOT_INSTRUCTOR


def test_override_round_trip(world) -> None:
    teacher = client_for(world.teacher)
    response = teacher.post(
        base(world) + "/overrides/",
        {"assignment": world.assignment.pk, "username": "bob", "score": 0.7, "comment": "Viva"},
        format="json",
    )
    assert response.status_code == 201
    assert response.json()["created_by"] == "teacher"
    bob = client_for(world.bob).get(base(world) + "/gradebook/").json()
    score = bob["rows"][0]["scores"][0]
    assert (score["score"], score["overridden"], score["override_comment"]) == (0.7, True, "Viva")
    assert client_for(world.ann).get(base(world) + "/overrides/").json() == []
    pk = ScoreOverride.objects.get().pk
    assert teacher.delete(f"{base(world)}/overrides/{pk}/").status_code == 204


def test_writes_refuse_strangers_and_foreign_assignments(world) -> None:
    teacher = client_for(world.teacher)
    response = teacher.post(
        base(world) + "/overrides/",
        {"assignment": world.assignment.pk, "username": "ta", "score": 0.7, "comment": "x"},
        format="json",
    )
    assert response.status_code == 400
    assert response.json() == {"username": [api.MSG_UNKNOWN_STUDENT]}
    response = teacher.post(
        base(world) + "/extensions/",
        {"assignment": 10**9, "usernames": ["ann"], "extra_days": 1},
        format="json",
    )
    assert response.json() == {"assignment": [api.MSG_UNKNOWN_ASSIGNMENT]}
    response = teacher.post(
        base(world) + "/extensions/",
        {"assignment": world.assignment.pk, "usernames": ["ann"]},
        format="json",
    )
    assert response.status_code == 400
