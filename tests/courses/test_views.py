"""The course pages: who may open which (course roles, not site staff), what they show, and the
instructor's round: an extension, an override with its comment, the CSV and the similarity."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse

from courses import views
from courses.models import Extension, ScoreOverride
from tests.courses.conftest import DUE
from tests.factories import assignment_create, question_get, submission_create, user_create

pytestmark = pytest.mark.django_db

CORRECT = """import numpy as np

def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ v
"""


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def urls(world) -> dict[str, str]:
    c, a = world.course.slug, world.assignment.pk
    return {
        "gradebook": reverse("courses:gradebook", kwargs={"slug": c}),
        "csv": reverse("courses:gradebook-csv", kwargs={"slug": c}),
        "members": reverse("courses:members", kwargs={"slug": c}),
        "extensions": reverse("courses:extensions", kwargs={"slug": c, "pk": a}),
        "override": reverse(
            "courses:override", kwargs={"slug": c, "pk": a, "user_id": world.ann.pk}
        ),
        "similarity": reverse("courses:similarity", kwargs={"slug": c, "pk": a}),
    }


STAFF_PAGES = ("gradebook", "csv")
INSTRUCTOR_PAGES = ("members", "extensions", "override", "similarity")


@pytest.mark.parametrize("page", STAFF_PAGES + INSTRUCTOR_PAGES)
def test_every_staff_page_checks_the_course_role(world, page) -> None:
    url = urls(world)[page]
    assert Client().get(url).status_code == 302  # to the login page
    assert client_for(world.ann).get(url).status_code == 403  # a student of the course
    # Site staff (even an author in the Instructors group) outside the course: not found.
    outsider = user_create(username="other-teacher", instructor=True)
    assert client_for(outsider).get(url).status_code == 404
    assert client_for(world.teacher).get(url).status_code == 200
    expected_ta = 200 if page in STAFF_PAGES else 403
    assert client_for(world.ta).get(url).status_code == expected_ta


def test_the_course_and_its_assignments_are_hidden_from_outsiders(world) -> None:
    outsider = client_for(user_create(username="eve"))
    assert outsider.get(world.course.get_absolute_url()).status_code == 404
    assert outsider.get(world.assignment.get_absolute_url()).status_code == 404


def test_the_student_course_page_shows_the_score_that_counts_in_the_course_time_zone(world) -> None:
    submission_create(
        user=world.ann, status="failed", score=0.8, received_at=DUE - timedelta(days=1)
    )
    page = client_for(world.ann).get(world.course.get_absolute_url())
    html = page.content.decode()
    assert "2026-03-01 23:59 CET" in html  # DUE is 22:59 UTC
    assert "0.80" in html and "Done" in html
    detail = client_for(world.ann).get(world.assignment.get_absolute_url()).content.decode()
    assert world.assignment.exercise.get_absolute_url() in detail


def test_an_unopened_assignment_is_hidden_from_students_only(world) -> None:
    from django.utils import timezone

    later = assignment_create(
        course=world.course,
        title="Later",
        question=question_get(),
        opens_at=timezone.now() + timedelta(days=3),
    )
    assert client_for(world.ann).get(later.get_absolute_url()).status_code == 404
    assert client_for(world.ta).get(later.get_absolute_url()).status_code == 200
    assert (
        "Later" not in client_for(world.ann).get(world.course.get_absolute_url()).content.decode()
    )


def test_the_instructor_round(world) -> None:
    teacher = client_for(world.teacher)
    u = urls(world)
    late = submission_create(
        user=world.ann,
        status="passed",
        score=1.0,
        received_at=DUE + timedelta(hours=2),
        code=CORRECT,
    )
    submission_create(
        user=world.bob,
        status="passed",
        score=1.0,
        received_at=DUE - timedelta(hours=2),
        code=CORRECT.replace("weights", "w"),
    )
    # The gradebook: Ann 0.9 (a day late), linked to her submission.
    book = teacher.get(u["gradebook"]).content.decode()
    work = reverse(
        "courses:work-detail",
        kwargs={"slug": world.course.slug, "pk": world.assignment.pk, "sid": late.pk},
    )
    assert f'href="{work}">0.90</a>' in book
    assert teacher.get(work).status_code == 200
    # An extension of one day for Ann, typed in Paris time: her submission is on time.
    response = teacher.post(
        u["extensions"],
        {"users": [world.ann.pk], "due_at": "2026-03-02T23:59", "note": "Was ill"},
    )
    assert response.status_code == 302
    extension = Extension.objects.get(user=world.ann)
    assert extension.due_at.isoformat() == "2026-03-02T22:59:00+00:00"
    assert ">1.00</a>" in teacher.get(u["gradebook"]).content.decode()
    # An override of Bob's score with a comment, shown to Bob, then removed.
    bob_override = reverse(
        "courses:override",
        kwargs={"slug": world.course.slug, "pk": world.assignment.pk, "user_id": world.bob.pk},
    )
    teacher.post(bob_override, {"score": "0.6", "comment": "Copied the mask line"})
    override = ScoreOverride.objects.get(user=world.bob)
    assert (override.score, override.created_by) == (0.6, world.teacher)
    bob_page = client_for(world.bob).get(world.assignment.get_absolute_url()).content.decode()
    assert "Copied the mask line" in bob_page and "0.60" in bob_page
    # The CSV.
    response = teacher.get(u["csv"])
    assert response["Content-Disposition"].startswith('attachment; filename="gradebook-')
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[1:] == [["ann", "ann@example.org", "1.0000"], ["bob", "bob@example.org", "0.6000"]]
    # The similarity report: Ann and Bob side by side, copied parts marked.
    report = teacher.get(u["similarity"]).content.decode()
    assert "ann and bob" in report and "<mark>" in report
    teacher.post(bob_override, {"action": "remove"})
    assert not ScoreOverride.objects.exists()


def test_similarity_escapes_student_code(world) -> None:
    evil = CORRECT + '\n# </code></pre><script>alert("x")</script>\n'
    for user in (world.ann, world.bob):
        submission_create(
            user=user, status="passed", score=1.0, received_at=DUE - timedelta(hours=1), code=evil
        )
    html = client_for(world.teacher).get(urls(world)["similarity"]).content.decode()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert" in html


def test_override_form_refuses_out_of_range_and_empty_comment(world) -> None:
    teacher = client_for(world.teacher)
    response = teacher.post(urls(world)["override"], {"score": "1.5", "comment": ""})
    assert response.status_code == 200
    assert not ScoreOverride.objects.exists()


def test_extension_form_wants_a_time_or_days_not_both(world) -> None:
    from courses.forms import MSG_EXTENSION_BOTH

    response = client_for(world.teacher).post(
        urls(world)["extensions"],
        {"users": [world.ann.pk], "due_at": "2026-03-02T23:59", "extra_days": "2"},
    )
    assert MSG_EXTENSION_BOTH in response.content.decode()
    assert not Extension.objects.exists()


def test_members_page_enrols_by_csv_and_invitation_link_joins(world) -> None:
    user_create(username="carol", email="carol@example.org")
    teacher = client_for(world.teacher)
    response = teacher.post(
        urls(world)["members"],
        {"names": "carol@example.org\nghost", "role": "student"},
        follow=True,
    )
    html = response.content.decode()
    assert views.MSG_ENROLLED.format(added=1, already=0) in html
    assert views.MSG_ENROL_UNKNOWN.format(names="ghost") in html
    dave = user_create(username="dave")
    join = reverse("courses:course-join", kwargs={"token": world.course.invite_token})
    assert client_for(dave).get(join).status_code == 200  # asks first
    response = client_for(dave).post(join)
    assert response.status_code == 302
    assert world.course.memberships.filter(user=dave, role="student").exists()
    bad = reverse("courses:course-join", kwargs={"token": "nope"})
    assert client_for(dave).post(bad).status_code == 404


def test_my_courses_lists_only_mine(world) -> None:
    html = client_for(world.ann).get(reverse("courses:course-list")).content.decode()
    assert "Attention 101" in html and "Gradebook" not in html
    html = client_for(world.ta).get(reverse("courses:course-list")).content.decode()
    assert "Gradebook" in html
