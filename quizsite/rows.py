"""Model rows read by statements written out once per process.

For the few reads on the hot paths (a submit's token, exercise and recent rows, a worker's
claim): the ORM's compile of a SELECT, and of its join, cost more than the database running
it. Statements are built from the models' own metadata, so a renamed column cannot be
missed, and values go through the database converters the ORM applies, so a row read here
equals the ORM's (whole rows become ``Model.from_db`` instances, with the related row cached
as ``select_related`` caches it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from django.db import connections
from django.db.models import Field, Model

M = TypeVar("M", bound=Model)


@dataclass(frozen=True)
class Columns:
    """Some columns of one table: their SQL, and how to turn a database row of them into the
    ORM's Python values."""

    sql: str  # "table"."column", ... in the order given
    names: tuple[str, ...]  # the fields' attnames, in that order
    _converters: tuple[tuple[int, tuple[Callable[..., Any], ...], Any], ...]
    _alias: str

    def convert(self, values: Sequence[Any]) -> list[Any]:
        out = list(values)
        connection = connections[self._alias]
        for i, converters, col in self._converters:
            value = out[i]
            for convert in converters:
                value = convert(value, col, connection)
            out[i] = value
        return out


def columns(
    model: type[Model], names: Sequence[str] | None = None, *, using: str = "default"
) -> Columns:
    """The columns of ``names`` (every concrete field if None) of ``model``'s table."""
    connection = connections[using]
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    fields = (
        model._meta.concrete_fields
        if names is None
        else [model._meta.pk if n == "pk" else model._meta.get_field(n) for n in names]
    )
    converters = []
    for i, f in enumerate(fields):
        col = f.get_col(table)
        found = tuple(connection.ops.get_db_converters(col) + f.get_db_converters(connection))
        if found:
            converters.append((i, found, col))
    return Columns(
        sql=", ".join(f"{table}.{quote(f.column)}" for f in fields),
        names=tuple(f.attname for f in fields),
        _converters=tuple(converters),
        _alias=using,
    )


@dataclass(frozen=True)
class _Reader:
    sql: str
    parts: tuple[tuple[type[Model], Columns], ...]
    related: Field | None


@functools.cache
def _reader(model: type[Model], lookup: str, related: str | None, using: str) -> _Reader:
    quote = connections[using].ops.quote_name
    table = quote(model._meta.db_table)
    parts = [(model, columns(model, using=using))]
    joins = ""
    rel_field = None
    if related is not None:
        rel_field = model._meta.get_field(related)
        target = rel_field.related_model
        rel_table = quote(target._meta.db_table)
        parts.append((target, columns(target, using=using)))
        joins = (
            f" INNER JOIN {rel_table} ON {table}.{quote(rel_field.column)}"
            f" = {rel_table}.{quote(target._meta.pk.column)}"
        )
    where = model._meta.pk if lookup == "pk" else model._meta.get_field(lookup)
    selected = ", ".join(c.sql for _, c in parts)
    # Identifiers from the models, quoted; the one value is a parameter.
    sql = f"SELECT {selected} FROM {table}{joins} WHERE {table}.{quote(where.column)} = %s"  # noqa: S608
    return _Reader(sql, tuple(parts), rel_field)


def row_get(
    model: type[M], *, lookup: str, value: Any, related: str | None = None, using: str = "default"
) -> M | None:
    """``model.objects.select_related(related).filter(**{lookup: value}).first()`` for a
    unique ``lookup``, in one statement written out once per process; None if no row."""
    reader = _reader(model, lookup, related, using)
    with connections[using].cursor() as cursor:
        cursor.execute(reader.sql, [value])
        row = cursor.fetchone()
    if row is None:
        return None
    instances, start = [], 0
    for part_model, cols in reader.parts:
        values = cols.convert(row[start : start + len(cols.names)])
        instances.append(part_model.from_db(using, cols.names, values))
        start += len(cols.names)
    if reader.related is not None:
        reader.related.set_cached_value(instances[0], instances[1])
    return instances[0]  # type: ignore[return-value]
