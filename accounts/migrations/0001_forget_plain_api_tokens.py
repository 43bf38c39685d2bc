"""Forget the API tokens of DRF's authtoken app, which stored each token in plain text.

They cannot become knox's tokens (only a hash of a token is kept, and it needs the token's own
characters), so their owners get new ones from POST /api/token/. The app is no longer
installed; its table, if this database has one, is emptied rather than dropped, so that its
migration history stays true.

It was quizsite's migration before the accounts app took it over; ``replaces`` names it, so a
database that ran it there records it here without running it again.
"""

from django.db import migrations

OLD_TABLE = "authtoken_token"


def forget_plain_tokens(apps, schema_editor):  # type: ignore[no-untyped-def]
    connection = schema_editor.connection
    if OLD_TABLE not in connection.introspection.table_names():
        return
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {connection.ops.quote_name(OLD_TABLE)}")  # noqa: S608


class Migration(migrations.Migration):
    replaces = [("quizsite", "0001_forget_plain_api_tokens")]
    dependencies: list[tuple[str, str]] = []

    operations = [migrations.RunPython(forget_plain_tokens, migrations.RunPython.noop)]
