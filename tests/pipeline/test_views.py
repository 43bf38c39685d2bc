"""The browser views of submissions (server side; the live flow is in tests/e2e)."""

from __future__ import annotations

import pytest
from django.test import Client

from grader.models import Submission
from grader.services import submitting as services
from grader.views import submissions as views
from tests.factories import exercise_get, submission_create, user_create
from tests.pipeline.stack import golden

pytestmark = pytest.mark.django_db
SLUG = "scaled-dot-product-attention"
CORRECT = golden("correct_matmul")


def login(username: str, *, staff: bool = False) -> Client:
    # staff: an instructor, as staff pages need the model permissions, not only is_staff
    user = user_create(username=username, password=f"pw-{username}-123", instructor=staff)
    c = Client()
    c.force_login(user)
    c.user = user  # type: ignore[attr-defined]
    return c


def make(c: Client, **fields: object) -> Submission:
    fields.setdefault("status", "queued")
    return submission_create(
        user=c.user,  # type: ignore[attr-defined]
        exercise=exercise_get(slug=SLUG),
        seed=7,
        code=fields.pop("code", CORRECT),
        **fields,
    )


def test_exercise_page_offers_the_editor_to_students_and_login_to_others() -> None:
    html = login("ann").get(f"/exercises/{SLUG}/").content.decode()
    assert 'id="submit-form"' in html and "Ctrl</kbd>+<kbd>Enter" in html
    assert "vendor/ace/ace.js" in html
    anon = Client().get(f"/exercises/{SLUG}/").content.decode()
    assert 'id="submit-form"' not in anon and "/accounts/login/?next=" in anon


def test_plain_form_submit_redirects_to_the_live_result_page() -> None:
    c = login("ann")
    response = c.post(f"/exercises/{SLUG}/submit/", {"code": CORRECT})
    s = Submission.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/submissions/{s.pk}/"
    page = c.get(response["Location"]).content.decode()
    assert "Queued, waiting for a grader" in page
    assert f'hx-get="/submissions/{s.pk}/status/"' in page  # polls until final


def test_htmx_submit_returns_the_result_fragment() -> None:
    c = login("ann")
    response = c.post(f"/exercises/{SLUG}/submit/", {"code": CORRECT}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert 'data-status="queued"' in html and "hx-trigger" in html


def test_the_submits_panel_polls_soon_once_unless_others_wait_ahead() -> None:
    c = login("ann")
    html = c.post(f"/exercises/{SLUG}/submit/", {"code": CORRECT}, HTTP_HX_REQUEST="true")
    assert f'hx-trigger="every {views.POLL_FIRST}"' in html.content.decode()
    mine = Submission.objects.get()
    again = c.get(f"/submissions/{mine.pk}/status/").content.decode()
    assert f'hx-trigger="every {views.POLL_INTERVAL}"' in again
    behind = login("bob")
    html = behind.post(f"/exercises/{SLUG}/submit/", {"code": CORRECT}, HTTP_HX_REQUEST="true")
    assert f'hx-trigger="every {views.POLL_INTERVAL}"' in html.content.decode()


def test_htmx_rejection_shows_the_message() -> None:
    c = login("ann")
    response = c.post(f"/exercises/{SLUG}/submit/", {"code": "  "}, HTTP_HX_REQUEST="true")
    assert services.MSG_CODE_EMPTY in response.content.decode()
    assert not Submission.objects.exists()


def test_final_result_stops_polling_and_escapes_what_the_code_printed() -> None:
    c = login("ann")
    s = make(
        c,
        status="failed",
        score=0.5,
        stdout="<script>alert(1)</script>",
        diagnosis=["scale-values"],
        checks=[],
    )
    html = c.get(f"/submissions/{s.pk}/status/").content.decode()
    assert "hx-trigger" not in html
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # The explanation (open to anyone), not the rebuttal anchor of the locked page.
    assert 'href="/misconceptions/#misconception-scale-values"' in html
    assert "#wrong-scale-values" not in html


def test_others_submissions_are_404_pages() -> None:
    s = make(login("ann"))
    ben = login("ben")
    assert ben.get(f"/submissions/{s.pk}/").status_code == 404
    assert ben.get(f"/submissions/{s.pk}/status/").status_code == 404


def test_history_diffs_two_submissions() -> None:
    c = login("ann")
    a = make(c, code="x = 1\n", status="failed")
    b = make(c, code="x = 2\n", status="passed")
    html = c.get(f"/exercises/{SLUG}/history/?a={a.pk}&b={b.pk}").content.decode()
    assert '<span class="diff-del">-x = 1</span>' in html
    assert '<span class="diff-add">+x = 2</span>' in html


def test_staff_pages_are_for_staff_only() -> None:
    ann = login("ann")
    for url in (
        "/staff/submissions/",
        f"/staff/exercises/{SLUG}/regrade/",
        "/staff/misconceptions/",
    ):
        assert ann.get(url).status_code == 302  # to the admin login
        assert login(f"staff-{len(url)}", staff=True).get(url).status_code == 200


def test_staff_list_filters_and_misconception_table() -> None:
    ann = login("ann")
    make(ann, status="failed", diagnosis=["missing-scale"], score=0.2)
    make(ann, status="passed", diagnosis=[], score=1.0)
    staff = login("boss", staff=True)
    html = staff.get("/staff/submissions/?misconception=missing-scale").content.decode()
    # By name, linked to its explanation, not as a bare slug.
    named = '<a href="/misconceptions/#misconception-missing-scale" data-code="missing-scale">'
    assert html.count(named + "The scores are not divided by √d_k</a>") == 1
    table = staff.get("/staff/misconceptions/").content.decode()
    assert "missing-scale" in table and "50%" in table
    assert "The scores are not divided by √d_k" in table  # by name, the slug beside it


def test_regrade_previews_changes_in_a_worker_then_applies_them() -> None:
    from grader.engine.sandbox import SandboxExecutor
    from grader.models import RegradePreview
    from grader.services.regrades import regrade_preview_run

    ann = login("ann")
    # Stored as failed with score 0, though the code is correct: as if the checks were fixed.
    wrong = make(ann, status="failed", score=0.0)
    same = make(ann, status="passed", score=1.0)
    staff = login("boss", staff=True)
    url = f"/staff/exercises/{SLUG}/regrade/"
    assert staff.post(url, {"action": "preview"}).status_code == 302
    preview = RegradePreview.objects.get()
    waiting = staff.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "Waiting for a grading worker" in waiting and "hx-trigger" in waiting
    # What the worker's task does with its warm sandbox:
    executor = SandboxExecutor()
    try:
        regrade_preview_run(preview_id=preview.pk, executor=executor)
        # A duplicate delivery computes nothing more.
        assert regrade_preview_run(preview_id=preview.pk, executor=executor) is None
    finally:
        executor.close()
    html = staff.get(url).content.decode()
    assert "<strong>1</strong> of 2 graded submissions would change" in html
    assert f"#{wrong.pk}" in html and "hx-trigger" not in html
    wrong.refresh_from_db()
    assert wrong.status == "failed"  # a preview stores no verdict
    response = staff.post(url, {"action": "apply"})
    assert response.status_code == 302
    statuses = set(
        Submission.objects.filter(pk__in=[wrong.pk, same.pk]).values_list("status", flat=True)
    )
    assert statuses == {"queued"}


def test_a_returning_student_resumes_from_their_latest_submission() -> None:
    c = login("ann")
    make(c, code="x = 'older'\n", status="failed")
    latest = make(c, code="x = 'latest'\n", status="failed")
    html = c.get(f"/exercises/{SLUG}/").content.decode()
    assert "x = &#x27;latest&#x27;" in html and "older" not in html
    assert f"/submissions/{latest.pk}/" in html
    fresh = c.get(f"/exercises/{SLUG}/?fresh=1").content.decode()
    assert "latest" not in fresh
    assert "def attention(Q, K, V, mask=None):" in fresh


def test_hidden_check_messages_are_withheld_from_students_but_shown_to_staff() -> None:
    ann = login("ann")
    check = {
        "name": "a",
        "label": "A",
        "passed": False,
        "message": "secret detail",
        "weight": 1,
        "visibility": "hidden",
    }
    s = make(ann, status="failed", score=0.0, checks=[check])
    student_html = ann.get(f"/submissions/{s.pk}/").content.decode()
    assert "secret detail" not in student_html
    assert "The details of this check are hidden." in student_html
    staff_html = login("boss", staff=True).get(f"/submissions/{s.pk}/").content.decode()
    assert "secret detail" in staff_html


def test_a_queued_submission_shows_how_many_are_ahead_of_it() -> None:
    from datetime import timedelta

    from django.utils import timezone

    ann, bob = login("ann"), login("bob")
    now = timezone.now()
    make(ann, queued_at=now - timedelta(seconds=3))
    make(ann, queued_at=now - timedelta(seconds=2))
    mine = make(bob, queued_at=now)
    html = bob.get(f"/submissions/{mine.pk}/status/").content.decode()
    assert "2 ahead of you" in html
    first = Submission.objects.order_by("queued_at").first()
    assert "next to be graded" in ann.get(f"/submissions/{first.pk}/status/").content.decode()
