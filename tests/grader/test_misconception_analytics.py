"""Misconception analytics for instructors: per exercise and code, counts over time
as a server-drawn chart with a text alternative, students affected, examples, drill-down."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from grader.models import Submission
from grader.selectors.misconceptions import (
    CHART_DAYS,
    CHART_HEIGHT,
    CHART_WEEKS,
    misconception_analytics,
    misconception_choices,
)
from tests.factories import exercise_get, submission_create, user_create

pytestmark = pytest.mark.django_db
SLUG = "scaled-dot-product-attention"


def _user(name: str, *, instructor: bool = False) -> Any:
    return user_create(username=name, password=f"pw-{name}-123", instructor=instructor)


def _sub(
    user: Any, *, days_ago: int, codes: list[str], status: str = "failed", message: str = ""
) -> Submission:
    return submission_create(
        user=user,
        exercise=exercise_get(slug=SLUG),
        code="x = 1",
        seed=1,
        status=status,
        score=0.0,
        diagnosis=codes,
        message=message,
        received_at=timezone.now() - timedelta(days=days_ago),
    )


def test_counts_students_share_chart_and_examples_per_code() -> None:
    ann, bob, cat = _user("ann"), _user("bob"), _user("cat")
    _sub(ann, days_ago=2, codes=["missing-scale"])
    newest = _sub(ann, days_ago=0, codes=["missing-scale", "scale-by-d"])
    latest = _sub(bob, days_ago=0, codes=["missing-scale"])
    _sub(cat, days_ago=1, codes=[], status="passed")
    _sub(cat, days_ago=0, codes=["scale-by-d"], status="queued")  # not graded: not counted
    (exercise,) = misconception_analytics()
    assert exercise["exercise"].slug == SLUG
    assert (exercise["graded"], exercise["graded_students"]) == (4, 3)
    missing, by_d = exercise["codes"]
    assert missing["code"] == "missing-scale" and missing["title"].startswith("The scores")
    assert missing["explanation"]
    assert (missing["count"], missing["students"]) == (3, 2)
    assert missing["share"] == pytest.approx(2 / 3)
    assert missing["examples"][:2] == [
        {"submission_id": latest.pk, "username": "bob"},
        {"submission_id": newest.pk, "username": "ann"},
    ]
    chart = missing["chart"]
    assert chart["unit"] == "day" and len(chart["bars"]) == CHART_DAYS
    assert [b["count"] for b in chart["bars"][-3:]] == [1, 0, 2]
    assert chart["bars"][-1]["height"] == CHART_HEIGHT and chart["bars"][-1]["y"] == 0
    assert "3 submissions in the last 30 days" in chart["summary"]
    assert missing["list_url"] == f"/staff/submissions/?exercise={SLUG}&misconception=missing-scale"
    assert (by_d["code"], by_d["count"]) == ("scale-by-d", 1)


def test_errors_and_time_outs_have_their_own_row() -> None:
    from grader.engine.grading import MSG_STOPPED
    from grader.engine.sandbox.messages import MSG_CPU_LIMIT, MSG_WALL_LIMIT

    ann, bob, cat = _user("ann"), _user("bob"), _user("cat")
    _sub(ann, days_ago=0, codes=[], status="error", message="Syntax error on line 2: oops")
    _sub(ann, days_ago=0, codes=[], status="error", message=MSG_CPU_LIMIT.format(seconds=5))
    stopped = MSG_STOPPED.format(reason=MSG_WALL_LIMIT.format(seconds=10))
    _sub(bob, days_ago=0, codes=["missing-scale"], status="failed", message=stopped)
    _sub(cat, days_ago=0, codes=[], status="passed")
    _sub(cat, days_ago=0, codes=[], status="internal-error", message="ours")  # not theirs
    (exercise,) = misconception_analytics()
    errors = exercise["errors"]
    assert (errors["count"], errors["errors"], errors["timeouts"], errors["students"]) == (
        3,
        1,
        2,
        2,
    )
    assert errors["list_url"] == f"/staff/submissions/?exercise={SLUG}&status=error"
    c = Client()
    c.force_login(_user("boss", instructor=True))
    html = c.get("/staff/misconceptions/").content.decode()
    assert 'data-code="errors-and-timeouts"' in html and "Errors and time-outs" in html
    assert "<strong>1</strong> error, <strong>2</strong> time-outs" in html


def test_a_long_history_is_charted_per_week() -> None:
    _sub(_user("ann"), days_ago=100, codes=["missing-scale"])
    _sub(_user("bob"), days_ago=0, codes=["missing-scale"])
    chart = misconception_analytics()[0]["codes"][0]["chart"]
    assert chart["unit"] == "week" and len(chart["bars"]) == CHART_WEEKS
    assert chart["bars"][-1]["count"] == 1 and chart["bars"][-1]["label"].startswith("week of ")


def test_the_page_draws_an_svg_chart_with_a_text_alternative_and_links() -> None:
    ann = _user("ann")
    s = _sub(ann, days_ago=0, codes=["missing-scale"])
    c = Client()
    c.force_login(_user("teacher", instructor=True))
    html = c.get("/staff/misconceptions/").content.decode()
    assert re.search(r'<svg viewBox="0 0 300 60"[^>]*role="img"', html)
    assert "<desc id=" in html and "<summary>The counts as a table</summary>" in html
    assert "style=" not in html and "<script>" not in html  # CSP: nothing inline
    assert f'href="/submissions/{s.pk}/">#{s.pk}</a>' in html
    assert f'href="/staff/submissions/?exercise={SLUG}&amp;misconception=missing-scale"' in html


def test_the_staff_list_filters_by_a_chosen_code() -> None:
    ann = _user("ann")
    hit = _sub(ann, days_ago=0, codes=["missing-scale"])
    miss = _sub(ann, days_ago=0, codes=["scale-by-d"])
    c = Client()
    c.force_login(_user("teacher", instructor=True))
    html = c.get(
        f"/staff/submissions/?exercise={SLUG}&misconception=missing-scale"
    ).content.decode()
    assert '<select id="f-mis" name="misconception">' in html
    assert '<option value="missing-scale" selected>' in html
    assert f"#{hit.pk}</a>" in html and f"#{miss.pk}</a>" not in html
    assert len(misconception_choices()) >= 5


def test_the_admin_index_links_the_staff_pages() -> None:
    c = Client()
    c.force_login(_user("teacher", instructor=True))
    html = c.get("/admin/").content.decode()
    assert 'id="staff-pages"' in html and 'href="/staff/misconceptions/"' in html
    bare = user_create(username="bare", is_staff=True)
    c.force_login(bare)
    assert 'id="staff-pages"' not in c.get("/admin/").content.decode()
