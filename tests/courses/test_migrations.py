"""Adding courses keeps existing data: submissions and answers made before (outside any course)
stay as they were, belong to no course, and rolling the app back leaves them too."""

from __future__ import annotations

import json
from pathlib import Path

from tests.manage import manage_run

BEFORE = """
from django.contrib.auth import get_user_model
from grader.models import Exercise, Submission
user = get_user_model().objects.create_user("old-student")
exercise = Exercise.objects.get(slug="scaled-dot-product-attention")
for code, status, score in (("x", "passed", 1.0), ("y", "failed", 0.4)):
    Submission.objects.create(
        user=user, exercise=exercise, code=code, seed=7, status=status, score=score
    )
"""

READ = """
import json
from grader.models import Submission
fields = ("user__username", "code", "status", "score")
rows = list(Submission.objects.order_by("id").values_list(*fields))
out = {"rows": rows}
try:
    from courses.models import Course, Membership
    from courses.selectors import courses_for
    from django.contrib.auth import get_user_model
    user = get_user_model().objects.get(username="old-student")
    out["courses"] = Course.objects.count()
    out["memberships"] = Membership.objects.count()
    out["mine"] = courses_for(user=user).count()
except Exception as error:  # the tables are gone after a rollback
    out["courses"] = type(error).__name__
print("RESULT" + json.dumps(out))
"""


def _read(database: Path) -> dict:
    out = manage_run("shell", "-c", READ, database=database).stdout
    return json.loads(out.split("RESULT", 1)[1])


def test_submissions_made_before_courses_stay_where_they_are(tmp_path: Path) -> None:
    database = tmp_path / "before-courses.sqlite3"
    manage_run("migrate", "--no-input", database=database)
    manage_run("migrate", "courses", "zero", "--no-input", database=database)  # as before the app
    manage_run("shell", "-c", BEFORE, database=database)
    before = _read(database)["rows"]
    assert len(before) == 2

    manage_run("migrate", "--no-input", database=database)
    after = _read(database)
    assert after["rows"] == before
    assert (after["courses"], after["memberships"], after["mine"]) == (0, 0, 0)

    manage_run("migrate", "courses", "zero", "--no-input", database=database)
    assert _read(database)["rows"] == before
