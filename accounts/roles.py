"""The Instructors group: staff who author question and exercise content in the admin."""

from django.contrib.auth.models import Group, Permission

INSTRUCTORS_GROUP = "Instructors"
# Apps whose models instructors author. Student-owned rows (attempts, submissions) are
# read-only to them: they may view them but not forge or delete them; they may regrade.
CONTENT_APPS = ("questions", "grader", "courses")
# Written by the pipeline, never by hand: instructors read them (trial runs are students').
# Extensions and overrides are changed on a course's staff pages, never in the admin.
READ_ONLY_MODELS = (
    "attempt",
    "submission",
    "regrade",
    "regradenotice",
    "trialrun",
    "extension",
    "scoreoverride",
)
READ_ONLY_EXTRA = ("regrade_submission",)


def instructors_group_sync() -> Group:
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS_GROUP)
    perms = Permission.objects.filter(content_type__app_label__in=CONTENT_APPS)
    allowed = [
        p
        for p in perms
        if p.content_type.model not in READ_ONLY_MODELS
        or p.codename.startswith("view_")
        or p.codename in READ_ONLY_EXTRA
    ]
    group.permissions.set(allowed)
    return group
