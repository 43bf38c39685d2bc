"""grader.models: the row's statuses are the engine's, and a verdict sets the row's fields."""

from __future__ import annotations

from grader.engine.grading import CheckResult, Verdict
from grader.engine.status import VerdictStatus
from grader.models import Submission


def test_every_verdict_status_is_a_final_submission_status() -> None:
    for status in VerdictStatus:
        assert Submission.Status(status.value) in Submission.FINAL_STATUSES
    assert {s.value for s in Submission.FINAL_STATUSES} == {s.value for s in VerdictStatus}
    assert set(Submission.Status.values) == {*VerdictStatus, "queued", "running"}


def test_a_verdict_sets_the_rows_fields_as_the_engine_made_them() -> None:
    check = CheckResult(
        name="scale", label="Scale", passed=False, message="√d_k", weight=2.0, visibility="shown"
    )
    verdict = Verdict(
        status=VerdictStatus.FAILED,
        score=0.5,
        checks=(check,),
        diagnosis=("missing-scale",),
        message="1 of 2 checks failed.",
        stdout="hi\n",
    )
    row = Submission(status=Submission.Status.RUNNING)
    values = row.verdict_apply(verdict, plots={"version": 1})
    assert set(values) == set(Submission.VERDICT_FIELDS)
    assert (row.status, row.score, row.message, row.stdout) == (
        "failed",
        0.5,
        "1 of 2 checks failed.",
        "hi\n",
    )
    assert row.checks == [
        {
            "name": "scale",
            "label": "Scale",
            "passed": False,
            "message": "√d_k",
            "weight": 2.0,
            "visibility": "shown",
        }
    ]
    assert row.diagnosis == ["missing-scale"]
    assert row.plots == {"version": 1}
    assert row.finished_at is not None and row.lease_expires_at is None
    # Ours, not the student's: never a score.
    row.verdict_apply(Verdict(status=VerdictStatus.INTERNAL_ERROR, score=0.0))
    assert (row.status, row.score, row.plots) == ("internal-error", None, {})
