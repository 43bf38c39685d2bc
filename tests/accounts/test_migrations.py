"""The accounts app's migration history: it took over quizsite's one migration without
running it twice, a new database migrates from nothing, and no model change lacks a migration."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.manage import manage_run

MIGRATION = "0001_forget_plain_api_tokens"


def _applied(database: Path) -> set[tuple[str, str]]:
    with sqlite3.connect(database) as db:
        return set(db.execute("SELECT app, name FROM django_migrations"))


@pytest.mark.django_db
def test_no_model_change_lacks_a_migration() -> None:
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_an_empty_database_migrates_and_records_the_accounts_migration(tmp_path: Path) -> None:
    database = tmp_path / "empty.sqlite3"
    manage_run("migrate", "--no-input", database=database)
    applied = _applied(database)
    assert ("accounts", MIGRATION) in applied


def test_a_database_that_ran_it_as_quizsite_records_it_without_running_it(tmp_path: Path) -> None:
    database = tmp_path / "before.sqlite3"
    manage_run("migrate", "--no-input", database=database)
    # The state of a database migrated before the move: the migration recorded under quizsite,
    # and a row in the old token table that running the migration again would delete.
    with sqlite3.connect(database) as db:
        db.execute("UPDATE django_migrations SET app = 'quizsite' WHERE app = 'accounts'")
        db.execute("CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY)")
        db.execute("INSERT INTO authtoken_token VALUES ('kept')")
    manage_run("migrate", "--no-input", database=database)
    applied = _applied(database)
    assert {("quizsite", MIGRATION), ("accounts", MIGRATION)} <= applied
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT key FROM authtoken_token").fetchall() == [("kept",)]
