"""Creating a course and an assignment in the admin, as an instructor of the site."""

from __future__ import annotations

import pytest
from django.test import Client

from courses.models import Assignment, Course, Extension, Membership
from tests.factories import exercise_get, instructor_create

pytestmark = pytest.mark.django_db


def test_an_instructor_creates_a_course_and_teaches_it() -> None:
    teacher = instructor_create(username="teacher")
    client = Client()
    client.force_login(teacher)
    response = client.post(
        "/admin/courses/course/add/",
        {
            "title": "Attention 101",
            "slug": "attention-101",
            "time_zone": "Europe/Paris",
            "invite_enabled": "on",
            "memberships-TOTAL_FORMS": "0",
            "memberships-INITIAL_FORMS": "0",
            "assignments-TOTAL_FORMS": "0",
            "assignments-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    course = Course.objects.get(slug="attention-101")
    assert Membership.objects.get(course=course).user == teacher
    assert Membership.objects.get(course=course).role == Membership.Role.INSTRUCTOR

    response = client.post(
        "/admin/courses/assignment/add/",
        {
            "course": course.pk,
            "title": "Attention",
            "exercise": exercise_get().pk,
            "due_at_0": "2026-03-01",
            "due_at_1": "23:59",
            "late_policy": "penalty",
            "penalty_per_day": "0.1",
            "penalty_cap": "0.3",
            "similarity_threshold": "0.8",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Assignment.objects.get(course=course).penalty_per_day == 0.1


def test_extensions_are_read_only_in_the_admin() -> None:
    client = Client()
    client.force_login(instructor_create(username="teacher"))
    assert client.get("/admin/courses/extension/").status_code == 200
    assert client.get("/admin/courses/extension/add/").status_code == 403
    assert not Extension.objects.exists()


def test_an_assignment_is_edited_in_its_course_time_zone() -> None:
    from datetime import UTC, datetime

    from tests.factories import assignment_create, course_create

    teacher = instructor_create(username="teacher")
    course = course_create(title="Paris", time_zone="Europe/Paris", instructor=teacher)
    assignment = assignment_create(course=course, due_at=datetime(2026, 3, 1, 22, 59, tzinfo=UTC))
    client = Client()
    client.force_login(teacher)
    page = client.get(f"/admin/courses/assignment/{assignment.pk}/change/").content.decode()
    assert 'name="due_at_1" value="23:59:00"' in page  # 22:59 UTC is 23:59 in Paris
