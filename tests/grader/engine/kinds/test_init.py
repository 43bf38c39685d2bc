"""Tests of grader/engine/kinds/__init__.py: the registry."""

from __future__ import annotations

import pytest

from grader.engine import pictures, reference
from grader.engine.kinds import (
    KIND_NAMES,
    KINDS,
    REFERENCE_SOURCES,
    UnknownKind,
    kind_get,
    reference_evaluate,
    wrong_implementations_all,
)
from grader.engine.misconceptions import WRONG_IMPLEMENTATIONS


def test_the_registry_names_the_kinds_every_check_knows():
    assert KIND_NAMES == reference.KINDS
    assert all(KINDS[name].name == name for name in KIND_NAMES)


def test_an_unknown_kind_is_a_value_error():
    with pytest.raises(UnknownKind):
        kind_get("nope")
    with pytest.raises(ValueError):
        kind_get("nope")


def test_the_reference_of_an_unknown_kind_is_a_value_error():
    with pytest.raises(ValueError):
        reference_evaluate("nope", ())


def test_one_catalogue_of_wrong_implementations():
    assert wrong_implementations_all() == WRONG_IMPLEMENTATIONS
    assert [impl.kind for impl in WRONG_IMPLEMENTATIONS] == sorted(
        (impl.kind for impl in WRONG_IMPLEMENTATIONS), key=KIND_NAMES.index
    )


def test_reference_sources_and_pictures_come_from_the_kinds():
    assert set(REFERENCE_SOURCES) == set(KIND_NAMES)
    for kind in KINDS.values():
        assert kind.pictures <= set(pictures.PICTURES)
