"""Write the content files (`questions/content/`) into the database.

Used by migration 0002 (with its historical models), by `manage.py load_content` and by the
`seed_content` test fixture. It imports no model: it takes an app registry, so the migration
can pass the models as of 0001. For the same reason it only sets the fields that exist on the
model it is given: content for a field added by a later migration is not written by migration
0002, but by that later migration (a RunPython that reads the files with `content_read` and
sets the new field) or by `load_content --update`.

Without `update`, it creates the roles, questions (with their key points, follow-ups and wrong
answers) and pages that are missing, and never changes an existing row: instructors edit the
content in the admin, and their edits stay. It reports the seeded rows that differ from the
files. With `update`, it overwrites those rows' fields from the files (for a contributor who
has just edited a file), and creates the key points, follow-ups and wrong answers added to
them. It never deletes: rows that no file describes are listed, and left alone.

Rows are matched by their stable slugs (questions, pages, roles; key points and wrong answers
within their question); follow-ups, which have no slug, by their position in the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from questions.content_files import (
    CONTENT_DIR,
    FollowUpContent,
    KeyPointContent,
    QuestionContent,
    content_read,
)

PUBLISHED = "published"
# Follow-up key points sort after the question's own: 100 + 10 * follow-up + key point.
FOLLOW_UP_KEY_POINT_ORDERING = 100


@dataclass
class LoadReport:
    """What a load did (created, updated) or would do with update (stale), one line each."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated)


class _Loader:
    def __init__(self, apps: Any, *, update: bool, compare: bool) -> None:
        self.update = update
        self.compare = compare
        self.report = LoadReport()
        self.Role = apps.get_model("questions", "Role")
        self.Question = apps.get_model("questions", "Question")
        self.FollowUp = apps.get_model("questions", "FollowUp")
        self.WrongAnswer = apps.get_model("questions", "WrongAnswer")
        self.KeyPoint = apps.get_model("questions", "KeyPoint")
        self.Page = apps.get_model("questions", "Page")

    # --- generic helpers ---

    @staticmethod
    def _known(model: Any, values: dict[str, Any]) -> dict[str, Any]:
        """Only the fields this model has (a historical model may lack the newer ones)."""
        names = set()
        for model_field in model._meta.concrete_fields:
            names.update((model_field.name, model_field.attname))
        return {key: value for key, value in values.items() if key in names}

    def _create(self, model: Any, label: str, values: dict[str, Any], *, report: bool) -> Any:
        row = model.objects.create(**self._known(model, values))
        if report:
            self.report.created.append(f"created {label}")
        return row

    def _sync(self, row: Any, label: str, values: dict[str, Any], *, write: bool) -> None:
        """Bring an existing row's fields to `values` when `write`; report what differs."""
        changed = [
            key
            for key, value in self._known(type(row), values).items()
            if getattr(row, key) != value
        ]
        if not changed:
            return
        line = f"{label}: {', '.join(changed)}"
        if not write:
            self.report.stale.append(line)
            return
        for key in changed:
            setattr(row, key, values[key])
        row.save()
        self.report.updated.append(f"updated {line}")

    # --- the content ---

    def roles(self, roles: list[Any]) -> dict[str, Any]:
        rows = {}
        for role in roles:
            values = {"name": role["name"], "ordering": role["ordering"]}
            row = self.Role.objects.filter(slug=role["slug"]).first()
            if row is None:
                row = self._create(
                    self.Role, f"role {role['slug']}", {"slug": role["slug"], **values}, report=True
                )
            else:
                self._sync(row, f"role {role['slug']}", values, write=self.update)
            rows[role["slug"]] = row
        return rows

    def question(self, data: QuestionContent, roles: dict[str, Any]) -> None:
        slug = data["slug"]
        values = {
            "title": data["title"],
            "level": data["level"],
            "prompt": data["prompt"],
            "short_answer": data["short_answer"],
            "full_answer": data["full_answer"],
            "exercise_slugs": data["exercise_slugs"],
            "ordering": data["ordering"],
        }
        question = self.Question.objects.filter(slug=slug).first()
        created = question is None
        if created:
            question = self._create(
                self.Question, "", {"slug": slug, "status": PUBLISHED, **values}, report=False
            )
            self.report.created.append(
                f"created question {slug} ({len(data['key_points'])} key points, "
                f"{len(data['follow_ups'])} follow-ups, {len(data['wrong_answers'])} wrong answers)"
            )
        else:
            self._sync(question, f"question {slug}", values, write=self.update)
            if not (self.update or self.compare):
                return  # the fixture's fast path: an existing question is left as it is
        # A new question's children are part of its creation; an existing one's are synced
        # (and new ones created) only with update.
        write = created or self.update
        self._roles(
            question, slug, [roles[role] for role in data["roles"]], write=write, report=not created
        )

        seen_key_points: set[str] = set()
        for index, point in enumerate(data["key_points"]):
            self._key_point(question, slug, point, None, index, created=created)
            seen_key_points.add(point["slug"])
        seen_follow_ups: set[int] = set()
        for index, follow_up_data in enumerate(data["follow_ups"]):
            follow_up = self._follow_up(question, slug, follow_up_data, index, created=created)
            if follow_up is None:
                continue  # missing, and reported: its key points wait for --update too
            seen_follow_ups.add(follow_up.pk)
            for kp_index, point in enumerate(follow_up_data["key_points"]):
                ordering = FOLLOW_UP_KEY_POINT_ORDERING + 10 * index + kp_index
                self._key_point(question, slug, point, follow_up, ordering, created=created)
                seen_key_points.add(point["slug"])
        seen_wrong: set[str] = set()
        for index, wrong in enumerate(data["wrong_answers"]):
            wrong_values = {
                "statement": wrong["statement"],
                "rebuttal": wrong["rebuttal"],
                "patterns": wrong["patterns"],
                "ordering": index,
            }
            self._child(
                self.WrongAnswer,
                self.WrongAnswer.objects.filter(question=question, slug=wrong["slug"]).first(),
                f"wrong answer {slug}/{wrong['slug']}",
                {"question": question, "slug": wrong["slug"]},
                wrong_values,
                created=created,
            )
            seen_wrong.add(wrong["slug"])

        if not created:
            for kp_slug in (
                self.KeyPoint.objects.filter(question=question)
                .exclude(slug__in=seen_key_points)
                .values_list("slug", flat=True)
            ):
                self.report.extra.append(f"key point {slug}/{kp_slug}")
            for ordering in (
                self.FollowUp.objects.filter(question=question)
                .exclude(pk__in=seen_follow_ups)
                .values_list("ordering", flat=True)
            ):
                self.report.extra.append(f"follow-up {slug}#{ordering + 1}")
            for wa_slug in (
                self.WrongAnswer.objects.filter(question=question)
                .exclude(slug__in=seen_wrong)
                .values_list("slug", flat=True)
            ):
                self.report.extra.append(f"wrong answer {slug}/{wa_slug}")

    def _roles(
        self, question: Any, slug: str, roles: list[Any], *, write: bool, report: bool
    ) -> None:
        wanted = {role.pk for role in roles}
        current = set(question.roles.values_list("pk", flat=True))
        if wanted == current:
            return
        names = ", ".join(role.slug for role in roles) or "none"
        if not write:
            self.report.stale.append(f"question {slug}: roles ({names} in the file)")
            return
        question.roles.set(roles)
        if report:
            self.report.updated.append(f"updated question {slug}: roles")

    def _child(
        self,
        model: Any,
        row: Any,
        label: str,
        identity: dict[str, Any],
        values: dict[str, Any],
        *,
        created: bool,
    ) -> Any:
        if row is None:
            if created or self.update:
                # A child of a new question is counted in the question's line.
                return self._create(model, label, {**identity, **values}, report=not created)
            self.report.stale.append(f"{label}: missing")
            return None
        self._sync(row, label, values, write=self.update)
        return row

    def _key_point(
        self,
        question: Any,
        slug: str,
        point: KeyPointContent,
        follow_up: Any,
        ordering: int,
        *,
        created: bool,
    ) -> None:
        values = {
            "label": point["label"],
            "patterns": point["patterns"],
            "ordering": ordering,
            "follow_up_id": follow_up.pk if follow_up is not None else None,
        }
        self._child(
            self.KeyPoint,
            self.KeyPoint.objects.filter(question=question, slug=point["slug"]).first(),
            f"key point {slug}/{point['slug']}",
            {"question": question, "slug": point["slug"]},
            values,
            created=created,
        )

    def _follow_up(
        self, question: Any, slug: str, data: FollowUpContent, index: int, *, created: bool
    ) -> Any:
        values = {key: value for key, value in data.items() if key != "key_points"}
        values["ordering"] = index
        row = self.FollowUp.objects.filter(question=question, ordering=index).order_by("pk").first()
        return self._child(
            self.FollowUp,
            row,
            f"follow-up {slug}#{index + 1}",
            {"question": question},
            values,
            created=created,
        )

    def page(self, data: Any) -> None:
        values = {"title": data["title"], "lead": data["lead"], "body": data["body"]}
        row = self.Page.objects.filter(slug=data["slug"]).first()
        if row is None:
            self._create(
                self.Page,
                f"page {data['slug']}",
                {"slug": data["slug"], "status": PUBLISHED, **values},
                report=True,
            )
        else:
            self._sync(row, f"page {data['slug']}", values, write=self.update)


def content_load(
    apps: Any, *, update: bool = False, compare: bool = False, directory: Path = CONTENT_DIR
) -> LoadReport:
    """Load the content files into the database (see the module docstring).

    `apps` is a migration's historical registry or django.apps.apps. The files are all read
    (and checked) before anything is written; a malformed file raises ContentError. `compare`
    also lists the existing questions' key points, follow-ups and wrong answers that differ
    from the files (`report.stale`, `report.extra`): `load_content` shows them; the migration
    and the test fixture, which only need what is missing, skip those queries.
    """
    bundle = content_read(directory)
    loader = _Loader(apps, update=update, compare=compare)
    with transaction.atomic():
        roles = loader.roles(bundle.roles)
        for question in bundle.questions:
            loader.question(question, roles)
        for page in bundle.pages:
            loader.page(page)
    return loader.report
