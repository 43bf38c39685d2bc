"""Property tests: the reference and the checks agree on random shapes and seeds."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.engine import reference
from grader.engine.checks import check_get
from grader.engine.checks.base import Probe, compare_with_reference
from grader.engine.executors.base import CallResult, RunRequest
from grader.engine.executors.trusted import CallableExecutor
from grader.engine.inputs import attention_call, mha_call, mha_weights, softmax_call
from grader.engine.kinds.attention_mistakes import attention_missing_scale
from tests.grader.variants import attention_einsum, mha_head_loop, softmax_logsumexp

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


def judge_one(kind, call, func, rtol=1e-4, atol=1e-5):
    run = CallableExecutor(func).run(RunRequest("", "f", (call,)))
    return compare_with_reference(kind, Probe(call, "random"), run.calls[0], rtol=rtol, atol=atol)


@SETTINGS
@given(
    batch=batch_shapes,
    n=st.integers(1, 6),
    m=st.integers(1, 6),
    d_k=st.integers(1, 32),
    d_v=st.integers(1, 5),
    seed=st.integers(0, 2**32 - 1),
    masked=st.booleans(),
)
def test_attention_variant_agrees_with_reference_on_any_shape(batch, n, m, d_k, d_v, seed, masked):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((*batch, n, d_k))
    k = rng.standard_normal((*batch, m, d_k))
    v = rng.standard_normal((*batch, m, d_v))
    mask = None
    if masked:
        mask = rng.random((n, m)) < 0.6
        mask[:, 0] = True
    assert judge_one("attention", attention_call(q, k, v, mask), attention_einsum) is None
    out = reference.attention(q, k, v, mask)
    assert out.shape == (*batch, n, d_v)


@SETTINGS
@given(d_k=st.sampled_from([4, 9, 16, 64, 100]), seed=st.integers(0, 2**32 - 1))
def test_missing_scale_never_passes_the_scale_check(d_k, seed):
    check = check_get("scale")
    params = check.clean_params({"d_ks": [d_k]})
    probes = check.prepare(params, np.random.default_rng(seed), "attention")
    run = CallableExecutor(attention_missing_scale).run(
        RunRequest("", "f", tuple(p.call for p in probes))
    )
    assert not check.judge(params, probes, run.calls, "attention").passed


@SETTINGS
@given(
    batch=batch_shapes,
    n=st.integers(1, 5),
    heads=st.integers(1, 4),
    d_head=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_multi_head_variant_agrees_with_reference(batch, n, heads, d_head, seed):
    rng = np.random.default_rng(seed)
    d_model = heads * d_head
    call = mha_call(rng.standard_normal((*batch, n, d_model)), mha_weights(rng, d_model), heads)
    assert judge_one("multi-head-attention", call, mha_head_loop) is None


@SETTINGS
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
    scale=st.sampled_from([1.0, 10.0, 1e3, 1e4]),
    seed=st.integers(0, 2**32 - 1),
    data=st.data(),
)
def test_softmax_variant_agrees_on_any_shape_and_axis(shape, scale, seed, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.random.default_rng(seed).standard_normal(shape) * scale
    assert judge_one("softmax", softmax_call(x, axis), softmax_logsumexp) is None
    out = reference.softmax(x, axis)
    np.testing.assert_allclose(out.sum(axis=axis), 1.0)


@SETTINGS
@given(
    shape=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    delta=st.floats(1e-2, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_checks_reject_outputs_off_by_more_than_the_tolerance(shape, delta, seed):
    x = np.random.default_rng(seed).standard_normal(shape)
    call = softmax_call(x)
    good = reference.softmax(x)
    probe = Probe(call, "random")
    assert (
        compare_with_reference("softmax", probe, CallResult(output=good), rtol=1e-4, atol=1e-5)
        is None
    )
    bad = good.copy()
    bad.flat[0] += delta
    assert compare_with_reference("softmax", probe, CallResult(output=bad), rtol=1e-4, atol=1e-5)
