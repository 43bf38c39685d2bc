"""Tests of grader/engine/kinds/__init__.py: the registry."""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

from grader.engine import diagnosis, pictures, reference
from grader.engine.kinds import (
    KIND_NAMES,
    KINDS,
    REFERENCE_SOURCES,
    UnknownKind,
    kind_get,
    reference_evaluate,
    wrong_implementations_all,
)
from grader.engine.kinds.base import BATCH, Kind
from grader.engine.misconceptions import CODES, WRONG_IMPLEMENTATIONS
from grader.engine.trials import trial_expected

# The contract every registered kind honours; each kind's own content is tested beside it.
EVERY_KIND = pytest.mark.parametrize("kind", list(KINDS.values()), ids=lambda k: k.name)


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


@EVERY_KIND
def test_is_registered_under_its_name(kind: Kind) -> None:
    assert kind_get(kind.name) is kind


@EVERY_KIND
def test_diagnostic_probes_are_seeded(kind: Kind) -> None:
    one = kind.diagnostic_probes(np.random.default_rng(1))
    two = kind.diagnostic_probes(np.random.default_rng(1))
    assert len(one) == len(two) > 0
    for a, b in zip(one, two, strict=True):
        assert (a.tags, a.form, a.base) == (b.tags, b.form, b.base)
        for x, y in zip(a.call.args, b.call.args, strict=True):
            np.testing.assert_array_equal(x, y)
    batched = any(p.base is not None for p in one)
    assert batched is kind.batch_copies
    assert all(BATCH not in p.tags or p.form for p in one)


@EVERY_KIND
def test_the_catalogue_is_well_formed(kind: Kind) -> None:
    assert kind.wrong_implementations
    for impl in kind.wrong_implementations:
        assert impl.kind == kind.name
        assert impl.code in CODES
        # A student-style module: it parses, and defines the entry point it was asked for.
        tree = ast.parse(impl.source("entry"))
        assert [f.name for f in tree.body if isinstance(f, ast.FunctionDef)] == ["entry"]
    names = [impl.name for impl in kind.wrong_implementations]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(
    "kind", [k for k in KINDS.values() if k.variant is not None], ids=lambda k: k.name
)
def test_variant_options_are_the_catalogue(kind: Kind) -> None:
    """Each single option of the variant function computes what the standalone wrong
    implementation it stands for computes, on every fixed diagnostic input: the pair search
    and the single matches cannot drift apart."""
    assert kind.variant is not None
    with_variant = [impl for impl in kind.wrong_implementations if impl.variant is not None]
    assert with_variant
    for impl in with_variant:
        keyword, option = impl.variant
        for probe in diagnosis.fixed_probes(kind.name):
            alone = diagnosis._trusted_outcome(impl.func, probe.call)
            as_variant = diagnosis._trusted_outcome(
                lambda *a, k=keyword, o=option: kind.variant(*a, **{k: o}), probe.call
            )
            assert diagnosis._same(alone, as_variant, 1e-12, 1e-12), (impl.name, probe.tags)


@EVERY_KIND
def test_parameters_match_the_reference(kind: Kind) -> None:
    params = list(inspect.signature(kind.reference).parameters)
    assert tuple(params) == kind.parameters
    assert {a.name for a in kind.arguments} <= set(kind.parameters)


@EVERY_KIND
def test_visible_examples_match_the_reference(kind: Kind) -> None:
    examples = kind.visible_examples()
    assert examples[0].name == "worked-example"
    for case in examples:
        expected = trial_expected(kind.name, case)
        np.testing.assert_allclose(expected, kind.reference(*case.args))
        assert np.all(np.isfinite(expected))


@EVERY_KIND
def test_plot_calls_are_fixed(kind: Kind) -> None:
    first, second = kind.plot_calls(), kind.plot_calls()
    assert len(first) == len(second) > 0
    for a, b in zip(first, second, strict=True):
        for x, y in zip(a.args, b.args, strict=True):
            if isinstance(x, np.ndarray):
                np.testing.assert_array_equal(x, y)
