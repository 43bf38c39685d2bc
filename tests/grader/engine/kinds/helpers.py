"""Shared assertions of the per-kind tests (one test module per kind module)."""

from __future__ import annotations

import ast
import inspect

import numpy as np

from grader.engine import diagnosis
from grader.engine.kinds import Kind
from grader.engine.misconceptions import CODES
from grader.engine.trials import trial_expected


def assert_catalogue_well_formed(kind: Kind) -> None:
    assert kind.wrong_implementations
    for impl in kind.wrong_implementations:
        assert impl.kind == kind.name
        assert impl.code in CODES
        # A student-style module: it parses, and defines the entry point it was asked for.
        tree = ast.parse(impl.source("entry"))
        assert [f.name for f in tree.body if isinstance(f, ast.FunctionDef)] == ["entry"]
    names = [impl.name for impl in kind.wrong_implementations]
    assert len(names) == len(set(names))


def assert_variant_options_are_the_catalogue(kind: Kind) -> None:
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


def assert_parameters_match_the_reference(kind: Kind) -> None:
    params = list(inspect.signature(kind.reference).parameters)
    assert tuple(params) == kind.parameters
    assert {a.name for a in kind.arguments} <= set(kind.parameters)


def assert_examples_match_the_reference(kind: Kind) -> None:
    examples = kind.visible_examples()
    assert examples[0].name == "worked-example"
    for case in examples:
        expected = trial_expected(kind.name, case)
        np.testing.assert_allclose(expected, kind.reference(*case.args))
        assert np.all(np.isfinite(expected))


def assert_plot_calls_fixed(kind: Kind) -> None:
    first, second = kind.plot_calls(), kind.plot_calls()
    assert len(first) == len(second) > 0
    for a, b in zip(first, second, strict=True):
        for x, y in zip(a.args, b.args, strict=True):
            if isinstance(x, np.ndarray):
                np.testing.assert_array_equal(x, y)
