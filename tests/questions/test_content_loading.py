"""Loading the content files into the database: migration 0002, `load_content`, the fixture."""

from __future__ import annotations

import shutil
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command
from django.core.management.base import CommandError

from questions.content_files import CONTENT_DIR, content_bundle
from questions.content_loading import content_load
from questions.management.commands import load_content
from questions.models import FollowUp, KeyPoint, Page, Question, Role, Status, WrongAnswer

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("load_content", *args, stdout=out)
    return out.getvalue()


def test_the_database_holds_exactly_the_files(seed_content: None) -> None:
    """Migration 0002 (or the fixture after a flush) wrote every field of every file."""
    bundle = content_bundle()
    assert list(Role.objects.values_list("slug", "name", "ordering")) == [
        (r["slug"], r["name"], r["ordering"]) for r in bundle.roles
    ]
    for data in bundle.questions:
        q = Question.objects.get(slug=data["slug"])
        assert q.status == Status.PUBLISHED
        for field in ("title", "level", "prompt", "short_answer", "full_answer", "ordering"):
            assert getattr(q, field) == data[field], (data["slug"], field)
        assert q.exercise_slugs == data["exercise_slugs"]
        assert sorted(q.roles.values_list("slug", flat=True)) == sorted(data["roles"])
        main = q.key_points.filter(follow_up__isnull=True)
        assert [(k.slug, k.label, k.patterns) for k in main] == [
            (k["slug"], k["label"], k["patterns"]) for k in data["key_points"]
        ]
        assert [(w.slug, w.statement, w.rebuttal, w.patterns) for w in q.wrong_answers.all()] == [
            (w["slug"], w["statement"], w["rebuttal"], w["patterns"]) for w in data["wrong_answers"]
        ]
        follow_ups = list(q.follow_ups.all())
        assert len(follow_ups) == len(data["follow_ups"])
        for index, (row, fu) in enumerate(zip(follow_ups, data["follow_ups"], strict=True)):
            assert row.ordering == index
            for field, value in fu.items():
                if field != "key_points":
                    assert getattr(row, field) == value, (data["slug"], index, field)
            assert [(k.slug, k.label, k.patterns) for k in row.key_points.all()] == [
                (k["slug"], k["label"], k["patterns"]) for k in fu["key_points"]
            ]
    page = Page.objects.get(slug="why-divide-by-sqrt-d")
    assert (page.title, page.lead, page.body) == tuple(
        bundle.page(page.slug)[f] for f in ("title", "lead", "body")
    )


def test_load_content_is_idempotent(seed_content: None) -> None:
    assert run() == load_content.NOTHING_TO_CREATE + "\n"
    assert run() == load_content.NOTHING_TO_CREATE + "\n"
    both = load_content.NOTHING_TO_CREATE + "\n" + load_content.NOTHING_TO_UPDATE + "\n"
    assert run("--update") == both
    assert run("--update") == both


def test_load_content_creates_what_is_missing_once(seed_content: None) -> None:
    Question.objects.filter(slug="why-divide-before-mixing").delete()
    Page.objects.all().delete()
    first = run()
    assert "created question why-divide-before-mixing" in first
    assert "created page why-divide-by-sqrt-d" in first
    assert load_content.NOTHING_TO_CREATE not in first
    assert Question.objects.get(slug="why-divide-before-mixing").follow_ups.count() == 3
    assert run() == load_content.NOTHING_TO_CREATE + "\n"


def test_instructor_edits_are_kept_and_update_overwrites_them(seed_content: None) -> None:
    q = Question.objects.get(slug="why-divide-before-softmax")
    q.prompt = "Edited by an instructor."
    q.save()
    q.roles.clear()
    KeyPoint.objects.filter(question=q, slug="variance-grows").update(patterns="edited")
    follow_up = q.follow_ups.get(ordering=3)
    follow_up.expected_number = 65.0
    follow_up.save()
    WrongAnswer.objects.filter(question=q, slug="scale-values").delete()

    kept = run()
    assert load_content.STALE_HINT.format(count=5) in kept
    assert "question why-divide-before-softmax: prompt" in kept
    assert "key point why-divide-before-softmax/variance-grows: patterns" in kept
    assert "follow-up why-divide-before-softmax#4: expected_number" in kept
    assert "wrong answer why-divide-before-softmax/scale-values: missing" in kept
    q.refresh_from_db()
    assert q.prompt == "Edited by an instructor." and not q.roles.exists()

    updated = run("--update")
    assert "updated question why-divide-before-softmax: prompt" in updated
    assert "updated question why-divide-before-softmax: roles" in updated
    assert "created wrong answer why-divide-before-softmax/scale-values" in updated
    q.refresh_from_db()
    data = content_bundle().question(q.slug)
    assert q.prompt == data["prompt"] and q.roles.count() == 3
    assert q.key_points.get(slug="variance-grows").patterns == data["key_points"][0]["patterns"]
    assert q.follow_ups.get(ordering=3).expected_number == 64.0
    assert q.wrong_answers.get(slug="scale-values").ordering == 2
    assert load_content.NOTHING_TO_UPDATE in run("--update")


def test_update_follows_an_edited_file_and_never_deletes(seed_content: None, tmp_path) -> None:
    directory = tmp_path / "content"
    shutil.copytree(CONTENT_DIR, directory)
    path = directory / "why-divide-before-mixing.md"
    text = path.read_text()
    path.write_text(
        text.replace(
            '[[wrong_answers]]\nslug = "new-idea-about-meaning"',
            "[[wrong_answers]]\nslug = \"a-new-one\"\nstatement = 'New.'\nrebuttal = 'No.'\n\n"
            '[[wrong_answers]]\nslug = "new-idea-about-meaning"',
        ).replace("# Short answer\n\n", "# Short answer\n\nEdited. ")
    )
    q = Question.objects.get(slug="why-divide-before-mixing")
    KeyPoint.objects.create(question=q, slug="instructor-point", label="Mine", patterns="mine")

    report = content_load(apps, update=True, directory=directory)
    assert "created wrong answer why-divide-before-mixing/a-new-one" in report.created
    assert "updated question why-divide-before-mixing: short_answer" in report.updated
    assert "updated wrong answer why-divide-before-mixing/new-idea-about-meaning: ordering" in (
        report.updated
    )
    assert report.extra == ["key point why-divide-before-mixing/instructor-point"]
    q.refresh_from_db()
    assert q.short_answer.startswith("Edited. ")
    assert [w.slug for w in q.wrong_answers.all()] == ["a-new-one", "new-idea-about-meaning"]
    assert q.key_points.filter(slug="instructor-point").exists()
    assert not content_load(apps, update=True, directory=directory).changed


def test_a_broken_file_stops_the_command_before_any_write(seed_content: None, tmp_path) -> None:
    directory = tmp_path / "content"
    shutil.copytree(CONTENT_DIR, directory)
    (directory / "why-divide-before-mixing.md").write_text("no front matter\n")
    Page.objects.all().delete()
    with pytest.raises(CommandError, match=r"why-divide-before-mixing\.md: front matter"):
        run("--directory", str(directory))
    assert not Page.objects.exists()


def test_follow_up_key_points_keep_their_ordering(seed_content: None) -> None:
    q = Question.objects.get(slug="why-divide-before-softmax")
    second = FollowUp.objects.get(question=q, ordering=1)
    assert list(second.key_points.values_list("ordering", flat=True)) == [110, 111, 112]


def test_the_migration_loads_with_historical_models(seed_content: None) -> None:
    """content_load only sets the fields the given models have (migration 0002 sees 0001's)."""
    from django.db import connection
    from django.db.migrations.loader import MigrationLoader

    state = MigrationLoader(connection).project_state(("questions", "0001_initial"))
    Question.objects.all().delete()
    report = content_load(state.apps)
    assert len([line for line in report.created if line.startswith("created question")]) == 10
    assert not content_load(apps).changed


def test_only_the_fields_a_model_has_are_set() -> None:
    from questions.content_loading import _Loader

    values = {"title": "T", "follow_up_id": None, "colour": "red"}
    assert _Loader._known(KeyPoint, values) == {"follow_up_id": None}
    assert _Loader._known(Page, values) == {"title": "T"}
