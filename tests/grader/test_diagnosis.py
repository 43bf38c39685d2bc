"""Diagnosis: every known wrong implementation is named; correct variants never are."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.engine import reference
from grader.engine.executors.trusted import CallableExecutor
from grader.engine.grading import FAILED, PASSED, grade
from grader.engine.misconceptions import (
    CODES,
    MISCONCEPTIONS,
    WRONG_IMPLEMENTATIONS,
    codes_for,
    misconception_describe,
)
from tests.grader.helpers import builtin_spec
from tests.grader.variants import CORRECT

# Scaling the values and dividing the weights after the softmax are the same function
# (softmax(S) V / c == (softmax(S) / c) V): no output can tell them apart, so both are named.
EQUIVALENT = {"scale-values": {"scale-after-softmax"}, "scale-after-softmax": {"scale-values"}}

REQUIRED_CODES = {
    "missing-scale",
    "scale-by-d",
    "scale-values",
    "hardcoded-scale",
    "wrong-dimension",
    "scale-by-model-width",
    "scale-after-softmax",
    "softmax-wrong-axis",
    "unstable-softmax",
    "unnormalized-weights",
    "mask-ignored",
    "mutates-input",
    "wrong-shape",
}


def test_catalogue_covers_the_issue():
    assert set(CODES) >= REQUIRED_CODES
    assert {impl.code for impl in WRONG_IMPLEMENTATIONS} <= set(CODES)
    assert {impl.code for impl in WRONG_IMPLEMENTATIONS} >= REQUIRED_CODES


def test_rebuttal_links():
    assert MISCONCEPTIONS["scale-values"].rebuttal_url == (
        "/questions/why-divide-before-softmax/#wrong-scale-values"
    )
    assert MISCONCEPTIONS["scale-by-d"].rebuttal_url.endswith("#wrong-divide-by-dk")
    assert MISCONCEPTIONS["unnormalized-weights"].rebuttal_url.endswith("#wrong-sums-to-one")
    assert MISCONCEPTIONS["missing-scale"].rebuttal_url is None
    described = misconception_describe("scale-by-d")
    assert set(described) == {"code", "title", "explanation", "rebuttal_url"}
    assert misconception_describe("nope")["rebuttal_url"] is None


@pytest.mark.parametrize("impl", WRONG_IMPLEMENTATIONS, ids=lambda i: f"{i.kind}:{i.name}")
def test_each_wrong_implementation_is_named(impl):
    verdict = grade(
        spec=builtin_spec(impl.kind), code="", seed=0, executor=CallableExecutor(impl.func)
    )
    assert verdict.status == FAILED, verdict.to_dict()
    assert impl.code in verdict.diagnosis
    extra = set(verdict.diagnosis) - {impl.code} - EQUIVALENT.get(impl.code, set())
    assert not extra, verdict.diagnosis
    assert set(verdict.diagnosis) <= set(codes_for(impl.kind))


@pytest.mark.parametrize(
    "kind,func",
    [(k, f) for k, fs in CORRECT.items() for f in fs],
    ids=lambda x: getattr(x, "__name__", x),
)
def test_correct_variants_pass_with_no_code(kind, func):
    verdict = grade(spec=builtin_spec(kind), code="", seed=0, executor=CallableExecutor(func))
    assert verdict.status == PASSED, verdict.to_dict()
    assert verdict.diagnosis == ()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**63 - 1))
def test_any_seed_correct_passes_and_missing_scale_is_named(seed):
    from grader.engine.wrong_implementations import attention_missing_scale

    spec = builtin_spec(reference.KIND_ATTENTION)
    ok = grade(spec=spec, code="", seed=seed, executor=CallableExecutor(reference.attention))
    assert ok.status == PASSED and ok.diagnosis == ()
    bad = grade(spec=spec, code="", seed=seed, executor=CallableExecutor(attention_missing_scale))
    assert bad.diagnosis == ("missing-scale",)


def test_diagnosis_from_probes_directly_names_nothing_on_reference():
    import numpy as np

    from grader.engine.diagnosis import diagnose, diagnostic_probes
    from grader.engine.executors.base import Limits

    for kind, func in (
        (reference.KIND_ATTENTION, reference.attention),
        (reference.KIND_MULTI_HEAD, reference.multi_head_attention),
        (reference.KIND_SOFTMAX, reference.softmax),
    ):
        probes = diagnostic_probes(kind, np.random.default_rng(3))
        run = CallableExecutor(func).run(
            code="", entry_point="f", calls=[p.call for p in probes], limits=Limits()
        )
        assert diagnose(kind, probes, run.calls) == []


@settings(max_examples=15, deadline=None)
@given(c=st.floats(min_value=1.5, max_value=60.0), seed=st.integers(0, 2**32 - 1))
def test_any_hardcoded_constant_is_named(c, seed):
    import numpy as np

    def divide_by_constant(Q, K, V, mask=None):
        s = Q @ np.swapaxes(K, -1, -2) / c
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        w = np.exp(s - s.max(axis=-1, keepdims=True))
        return w / w.sum(axis=-1, keepdims=True) @ V

    spec = builtin_spec(reference.KIND_ATTENTION)
    verdict = grade(spec=spec, code="", seed=seed, executor=CallableExecutor(divide_by_constant))
    assert verdict.status == FAILED
    assert "hardcoded-scale" in verdict.diagnosis


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**63 - 1))
def test_fast_correct_variants_pass_on_any_seed(seed):
    from tests.grader.variants import (
        attention_einsum,
        attention_float32,
        mha_einsum,
        softmax_float32,
        softmax_logsumexp,
    )

    for kind, func in (
        (reference.KIND_ATTENTION, attention_einsum),
        (reference.KIND_ATTENTION, attention_float32),
        (reference.KIND_MULTI_HEAD, mha_einsum),
        (reference.KIND_SOFTMAX, softmax_logsumexp),
        (reference.KIND_SOFTMAX, softmax_float32),
    ):
        verdict = grade(
            spec=builtin_spec(kind), code="", seed=seed, executor=CallableExecutor(func)
        )
        assert verdict.status == PASSED, (func.__name__, verdict.to_dict())
        assert verdict.diagnosis == ()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**63 - 1), data=st.data())
def test_wrong_implementations_are_named_on_any_seed(seed, data):
    impl = data.draw(st.sampled_from(WRONG_IMPLEMENTATIONS))
    verdict = grade(
        spec=builtin_spec(impl.kind), code="", seed=seed, executor=CallableExecutor(impl.func)
    )
    assert verdict.status == FAILED
    assert impl.code in verdict.diagnosis, (impl.name, verdict.diagnosis)


@settings(max_examples=8, deadline=None)
@given(c=st.floats(min_value=1.5, max_value=60.0), seed=st.integers(0, 2**32 - 1))
def test_any_hardcoded_constant_is_named_in_multi_head(c, seed):
    import numpy as np

    def heads_divide_by_constant(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
        *lead, n, d = X.shape
        dh = d // n_heads

        def split(t):
            return np.swapaxes(t.reshape(*lead, n, n_heads, dh), -2, -3)

        q, k, v = split(X @ W_q), split(X @ W_k), split(X @ W_v)
        s = q @ np.swapaxes(k, -1, -2) / c
        if mask is not None:
            s = np.where(np.asarray(mask)[..., None, :, :], s, -np.inf)
        w = np.exp(s - s.max(axis=-1, keepdims=True))
        w /= w.sum(axis=-1, keepdims=True)
        return np.swapaxes(w @ v, -2, -3).reshape(*lead, n, d) @ W_o

    spec = builtin_spec(reference.KIND_MULTI_HEAD)
    executor = CallableExecutor(heads_divide_by_constant)
    verdict = grade(spec=spec, code="", seed=seed, executor=executor)
    assert verdict.status == FAILED
    assert "hardcoded-scale" in verdict.diagnosis
