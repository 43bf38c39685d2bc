"""Regrades applied: the confirmation, the progress, the used-up preview and the students'
notices. A worker's grade is played here by claim + finish with a given verdict."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from grader.engine.grading import Verdict
from grader.models import (
    REGRADE_NOTICE_THRESHOLD,
    Exercise,
    Regrade,
    RegradeNotice,
    RegradePreview,
    Submission,
)
from grader.selectors.regrades import (
    regrade_announcements_unseen,
    regrade_notices_unseen,
    regrade_preview_current,
    regrade_progress_latest,
)
from grader.services.queue import submission_claim, submission_finish
from grader.services.regrades import (
    MSG_PREVIEW_USED,
    MSG_REGRADE_IN_PROGRESS,
    MSG_REGRADE_REASON,
    RegradeRefused,
    regrade_notice_dismiss,
    submissions_regrade,
)
from tests.factories import exercise_get, submission_create, user_create

pytestmark = pytest.mark.django_db
SLUG = "scaled-dot-product-attention"


def _user(name: str, *, instructor: bool = False) -> Any:
    return user_create(username=name, password=f"pw-{name}-123", instructor=instructor)


def _client(u: Any) -> Client:
    c = Client()
    c.force_login(u)
    return c


def _submission(user: Any, *, status: str = "failed", score: float | None = 0.0) -> Submission:
    return submission_create(
        user=user,
        exercise=exercise_get(slug=SLUG),
        code="def attention(Q, K, V, mask=None): ...",
        seed=7,
        status=status,
        score=score,
        finished_at=timezone.now(),
    )


def _grade(submission: Submission, *, status: str, score: float | None) -> None:
    """What a worker does with a queued row: claim it, store a verdict."""
    claimed = submission_claim(submission_id=submission.pk, worker="test-worker")
    assert claimed is not None
    verdict = Verdict(status=status, score=0.0 if score is None else score)
    assert submission_finish(submission=claimed, verdict=verdict)


def _done_preview(exercise: Exercise, user: Any, **fields: Any) -> RegradePreview:
    return RegradePreview.objects.create(
        exercise=exercise, requested_by=user, status="done", total=2, graded=2, **fields
    )


def test_applying_records_the_old_verdicts_and_queues_every_final_submission() -> None:
    ann, bob = _user("ann"), _user("bob")
    a = _submission(ann, status="failed", score=0.25)
    b = _submission(bob, status="passed", score=1.0)
    waiting = _submission(bob, status="queued", score=None)
    exercise = Exercise.objects.get(slug=SLUG)
    regrade = submissions_regrade(exercise=exercise)
    assert regrade.total == 2 and regrade.checks_changed_at == exercise.updated_at
    a.refresh_from_db()
    b.refresh_from_db()
    waiting.refresh_from_db()
    assert (a.status, a.regrade_id, a.regrade_old_status, a.regrade_old_score) == (
        "queued",
        regrade.pk,
        "failed",
        0.25,
    )
    assert (b.regrade_old_status, b.regrade_old_score) == ("passed", 1.0)
    assert waiting.regrade_id is None  # it was never graded: nothing to regrade


def test_a_changed_score_leaves_a_notice_an_unchanged_one_none() -> None:
    ann, bob = _user("ann"), _user("bob")
    changed = _submission(ann, status="failed", score=0.0)
    same = _submission(bob, status="passed", score=1.0)
    exercise = Exercise.objects.get(slug=SLUG)
    regrade = submissions_regrade(exercise=exercise)
    progress = regrade_progress_latest(exercise=exercise)
    assert (progress.done, progress.total, progress.is_done) == (0, 2, False)
    _grade(changed, status="passed", score=1.0)
    assert regrade_progress_latest(exercise=exercise).done == 1
    _grade(same, status="passed", score=1.0)
    progress = regrade_progress_latest(exercise=exercise)
    assert (progress.done, progress.is_done, progress.notices) == (2, True, 1)
    notice = RegradeNotice.objects.get()
    assert (notice.submission_id, notice.user_id) == (changed.pk, ann.pk)
    assert (notice.old_status, notice.old_score, notice.new_status, notice.new_score) == (
        "failed",
        0.0,
        "passed",
        1.0,
    )
    date = timezone.localtime(regrade.checks_changed_at).strftime("%Y-%m-%d")
    assert notice.reason == MSG_REGRADE_REASON.format(date=date)
    assert list(regrade_notices_unseen(user=ann, exercise=exercise)) == [notice]
    assert not regrade_notices_unseen(user=bob).exists()


def test_an_internal_error_in_a_regrade_tells_the_student_nothing() -> None:
    s = _submission(_user("ann"), status="failed", score=0.0)
    submissions_regrade(exercise=Exercise.objects.get(slug=SLUG))
    _grade(s, status="internal-error", score=None)
    assert not RegradeNotice.objects.exists()
    progress = regrade_progress_latest(exercise=Exercise.objects.get(slug=SLUG))
    assert progress.is_done and progress.internal_errors == 1


def test_finishing_an_ordinary_submission_costs_one_query() -> None:
    s = _submission(_user("ann"), status="queued", score=None)
    claimed = submission_claim(submission_id=s.pk, worker="w")
    with CaptureQueriesContext(connection) as queries:
        submission_finish(submission=claimed, verdict=Verdict(status="passed", score=1.0))
    assert len(queries) == 1  # the conditional UPDATE; no regrade lookup


def test_a_regrade_is_refused_while_one_runs_and_a_used_preview_twice() -> None:
    teacher = _user("teacher", instructor=True)
    s = _submission(_user("ann"))
    exercise = Exercise.objects.get(slug=SLUG)
    preview = _done_preview(exercise, teacher)
    assert regrade_preview_current(exercise=exercise).can_apply
    submissions_regrade(exercise=exercise, user=teacher, preview=preview)
    assert regrade_preview_current(exercise=exercise) is None  # used up: no Apply any more
    with pytest.raises(RegradeRefused) as refused:
        submissions_regrade(exercise=exercise)
    assert refused.value.message == MSG_REGRADE_IN_PROGRESS.format(done=0, total=1)
    _grade(s, status="failed", score=0.0)
    with pytest.raises(RegradeRefused) as refused:
        submissions_regrade(exercise=exercise, preview=preview)
    assert refused.value.message == MSG_PREVIEW_USED
    assert Regrade.objects.count() == 1


def test_a_preview_older_than_the_last_edit_cannot_be_applied() -> None:
    exercise = Exercise.objects.get(slug=SLUG)
    preview = _done_preview(exercise, None, created_at=timezone.now() - timedelta(hours=1))
    exercise.save()  # the checks' inline saves the exercise: updated_at moves on
    state = regrade_preview_current(exercise=exercise)
    assert state.preview == preview and state.outdated and not state.can_apply


def test_a_student_dismisses_only_their_own_notice() -> None:
    ann, bob = _user("ann"), _user("bob")
    s = _submission(ann)
    notice = RegradeNotice.objects.create(
        submission=s,
        user=ann,
        old_status="failed",
        old_score=0.0,
        new_status="passed",
        new_score=1.0,
        reason="r",
    )
    assert not regrade_notice_dismiss(user=bob, notice_id=notice.pk)
    assert regrade_notice_dismiss(user=ann, notice_id=notice.pk)
    assert not regrade_notices_unseen(user=ann).exists()


# --- pages ---------------------------------------------------------------------------------


def test_the_apply_button_leads_to_a_confirmation_that_says_how_many() -> None:
    teacher = _user("teacher", instructor=True)
    _submission(_user("ann"))
    _submission(_user("bob"), status="passed", score=1.0)
    exercise = Exercise.objects.get(slug=SLUG)
    preview = _done_preview(exercise, teacher, changes=[{"submission_id": 1}])
    c = _client(teacher)
    url = f"/staff/exercises/{SLUG}/regrade/"
    page = c.get(url).content.decode()
    confirm_url = f"/staff/exercises/{SLUG}/regrade/confirm/?preview={preview.pk}"
    assert f'href="{confirm_url}"' in page
    assert 'name="action" value="apply"' not in page  # applying is on the confirmation only
    confirm = c.get(confirm_url).content.decode()
    assert '<p id="confirm-count"><strong>2</strong> submissions will be graded again' in confirm
    assert f'name="preview" value="{preview.pk}"' in confirm
    response = c.post(url, {"action": "apply", "preview": str(preview.pk)})
    assert response.status_code == 302
    assert Regrade.objects.get().preview == preview
    after = c.get(url).content.decode()
    assert 'id="preview"' not in after and confirm_url not in after  # the preview is used up
    assert "<strong>0</strong> of 2 regraded" in after
    assert f'hx-get="/staff/exercises/{SLUG}/regrade/progress/"' in after
    # The used preview's confirmation sends the instructor back.
    assert c.get(confirm_url).status_code == 302


def test_progress_fragment_stops_polling_once_every_submission_is_graded() -> None:
    teacher = _user("teacher", instructor=True)
    s = _submission(_user("ann"))
    submissions_regrade(exercise=Exercise.objects.get(slug=SLUG), user=teacher)
    c = _client(teacher)
    url = f"/staff/exercises/{SLUG}/regrade/progress/"
    assert "hx-trigger" in c.get(url).content.decode()
    _grade(s, status="passed", score=1.0)
    done = c.get(url).content.decode()
    assert "hx-trigger" not in done and 'data-done="true"' in done
    assert "<strong>1</strong> of 1 regraded; 1 score changed" in done


@pytest.mark.parametrize(
    "url",
    [
        f"/staff/exercises/{SLUG}/regrade/confirm/",
        f"/staff/exercises/{SLUG}/regrade/progress/",
        "/staff/grades.csv",
    ],
)
def test_new_staff_pages_need_the_model_permissions(url: str) -> None:
    assert _client(_user("bare", instructor=False)).get(url).status_code == 302  # not staff
    bare_staff = user_create(username="bare-staff", is_staff=True)
    assert _client(bare_staff).get(url).status_code == 403
    assert _client(_user("teacher", instructor=True)).get(url).status_code == 200


def test_confirming_needs_the_regrade_permission() -> None:
    viewer = user_create(username="viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_submission"))
    assert _client(viewer).get(f"/staff/exercises/{SLUG}/regrade/confirm/").status_code == 403
    assert _client(viewer).get(f"/staff/exercises/{SLUG}/regrade/progress/").status_code == 200


@pytest.mark.parametrize("preview", ["x", "0", "99999999999999999999", "1%00"])
def test_a_bad_preview_id_is_400(preview: str) -> None:
    c = _client(_user("teacher", instructor=True))
    url = f"/staff/exercises/{SLUG}/regrade/"
    assert c.post(url, {"action": "apply", "preview": preview}).status_code == 400
    assert c.get(f"{url}confirm/?preview={preview}").status_code == 400
    assert not Regrade.objects.exists()


def test_the_student_sees_the_notice_on_both_pages_until_dismissed() -> None:
    ann = _user("ann")
    s = _submission(ann, status="failed", score=0.0)
    submissions_regrade(exercise=Exercise.objects.get(slug=SLUG))
    _grade(s, status="passed", score=1.0)
    c = _client(ann)
    history = f"/exercises/{SLUG}/history/"
    for url in (f"/exercises/{SLUG}/", history):
        html = c.get(url).content.decode()
        assert f'<li class="regrade-notice" data-submission="{s.pk}" data-regrade=' in html, url
        assert "your best score went from 0.00 to 1.00" in html
        assert "because the exercise&#x27;s checks changed on" in html
    # Someone else sees nothing of it.
    assert "regrade-notice" not in _client(_user("bob")).get(history).content.decode()
    notice = RegradeNotice.objects.get()
    response = c.post(f"/notices/{notice.pk}/dismiss/", {"next": history})
    assert response.status_code == 302 and response["Location"] == history
    assert "regrade-notice" not in c.get(history).content.decode()


def test_dismissing_never_redirects_off_site() -> None:
    c = _client(_user("ann"))
    response = c.post("/notices/1/dismiss/", {"next": "https://evil.example/"})
    assert response.status_code == 302 and response["Location"] == "/exercises/"


@pytest.mark.django_db(transaction=True)
def test_a_regrade_is_never_seen_done_before_its_notices_are_stored(monkeypatch) -> None:
    import threading

    from django.db import connections

    from grader.services import queue as services

    s = _submission(_user("ann"), status="failed", score=0.0)
    exercise = exercise_get(slug=SLUG)
    submissions_regrade(exercise=exercise)
    seen: list[Any] = []

    def poll() -> None:  # the progress page, served meanwhile by another connection
        try:
            seen.append(regrade_progress_latest(exercise=exercise))
        finally:
            connections.close_all()

    real_record = services.regrade_notice_record

    def record_after_a_poll(**kwargs: Any) -> None:
        # The instant a loaded worker is descheduled for: the verdict is stored, the notice not.
        reader = threading.Thread(target=poll)
        reader.start()
        reader.join()
        real_record(**kwargs)

    monkeypatch.setattr(services, "regrade_notice_record", record_after_a_poll)
    _grade(s, status="passed", score=1.0)
    (progress,) = seen
    assert not progress.is_done or progress.notices == 1, (progress.done, progress.notices)
    assert regrade_progress_latest(exercise=exercise).notices == 1


def test_a_regrade_of_several_attempts_is_one_notice_small_moves_listed_not_announced() -> None:
    ann = _user("ann")
    exercise = Exercise.objects.get(slug=SLUG)
    old = [_submission(ann, status="failed", score=score) for score in (0.5, 0.6, 0.7, 0.8)]
    regrade = submissions_regrade(exercise=exercise)
    assert regrade.notice_threshold == REGRADE_NOTICE_THRESHOLD
    for s, new in zip(old, (0.52, 0.63, 0.71, 0.9), strict=True):
        _grade(s, status="failed", score=new)
    notices = RegradeNotice.objects.order_by("submission_id")
    assert [n.announced for n in notices] == [False, False, False, True]
    progress = regrade_progress_latest(exercise=exercise)
    assert (progress.notices, progress.quiet) == (4, 3)
    assert {n.regrade_id for n in notices} == {regrade.pk}
    [announced] = regrade_announcements_unseen(user=ann, exercise=exercise)
    assert (announced.best_before, announced.best_after) == (0.8, 0.9)
    assert (announced.changed, announced.quiet) == (4, 3)
    c = _client(ann)
    html = c.get(f"/exercises/{SLUG}/").content.decode()
    assert html.count('class="regrade-notice"') == 1
    assert "your best score went from 0.80 to 0.90" in html
    assert f"/regrades/{regrade.pk}/" in html
    details = c.get(f"/regrades/{regrade.pk}/").content.decode()
    assert details.count('data-announced="no"') == 3 and details.count('data-announced="yes"') == 1
    assert _client(_user("bob")).get(f"/regrades/{regrade.pk}/").status_code == 404
    # One Dismiss stands for the whole regrade of the exercise.
    assert regrade_notice_dismiss(user=ann, notice_id=announced.notice.pk)
    assert not regrade_notices_unseen(user=ann).exists()


def test_only_small_moves_announce_nothing_and_the_instructor_sets_the_threshold() -> None:
    ann, bob = _user("ann"), _user("bob")
    a = _submission(ann, status="failed", score=0.5)
    b = _submission(bob, status="failed", score=0.5)
    instructor = _user("boss", instructor=True)
    response = _client(instructor).post(
        f"/staff/exercises/{SLUG}/regrade/", {"action": "apply", "notice_threshold": "0.2"}
    )
    assert response.status_code == 302
    assert Regrade.objects.get().notice_threshold == 0.2
    _grade(a, status="failed", score=0.6)  # 0.1 < 0.2: listed, not announced
    _grade(b, status="passed", score=0.6)  # a status change is always announced
    assert regrade_announcements_unseen(user=ann) == []
    assert RegradeNotice.objects.get(user=ann).announced is False
    assert len(regrade_announcements_unseen(user=bob)) == 1


@pytest.mark.parametrize("threshold", ["-0.1", "1.5", "x"])
def test_a_bad_threshold_is_400(threshold: str) -> None:
    _submission(_user("ann"))
    response = _client(_user("boss", instructor=True)).post(
        f"/staff/exercises/{SLUG}/regrade/", {"action": "apply", "notice_threshold": threshold}
    )
    assert response.status_code == 400
    assert not Regrade.objects.exists()
