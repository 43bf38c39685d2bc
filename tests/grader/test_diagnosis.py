"""Diagnosis: every known wrong implementation is named; correct variants never are."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.engine import messages, reference
from grader.engine.checks import check_get
from grader.engine.checks.base import Probe, output_problem, readable_error
from grader.engine.diagnosis import fixed_probes
from grader.engine.executors.base import CallResult, RunRequest
from grader.engine.executors.trusted import CallableExecutor
from grader.engine.grading import grade
from grader.engine.misconceptions import (
    CODES,
    MISCONCEPTIONS,
    WRONG_IMPLEMENTATIONS,
    codes_for,
    misconception_describe,
)
from grader.engine.status import VerdictStatus
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
    assert set(described) == {
        "code",
        "title",
        "label",
        "explanation",
        "rebuttal_url",
        "anchor",
        "explanation_url",
    }
    assert described["explanation_url"] == "/misconceptions/#misconception-scale-by-d"
    assert described["anchor"] == "misconception-scale-by-d"
    assert misconception_describe("nope")["rebuttal_url"] is None


@pytest.mark.parametrize("impl", WRONG_IMPLEMENTATIONS, ids=lambda i: f"{i.kind}:{i.name}")
def test_each_wrong_implementation_is_named(impl):
    verdict = grade(
        spec=builtin_spec(impl.kind), code="", seed=0, executor=CallableExecutor(impl.func)
    )
    assert verdict.status == VerdictStatus.FAILED, verdict.to_dict()
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
    assert verdict.status == VerdictStatus.PASSED, verdict.to_dict()
    assert verdict.diagnosis == ()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**63 - 1))
def test_any_seed_correct_passes_and_missing_scale_is_named(seed):
    from grader.engine.kinds.attention_mistakes import attention_missing_scale

    spec = builtin_spec(reference.KIND_ATTENTION)
    ok = grade(spec=spec, code="", seed=seed, executor=CallableExecutor(reference.attention))
    assert ok.status == VerdictStatus.PASSED and ok.diagnosis == ()
    bad = grade(spec=spec, code="", seed=seed, executor=CallableExecutor(attention_missing_scale))
    assert bad.diagnosis == ("missing-scale",)


def test_diagnosis_from_probes_directly_names_nothing_on_reference():
    import numpy as np

    from grader.engine.diagnosis import diagnose, diagnostic_probes

    for kind, func in (
        (reference.KIND_ATTENTION, reference.attention),
        (reference.KIND_MULTI_HEAD, reference.multi_head_attention),
        (reference.KIND_SOFTMAX, reference.softmax),
    ):
        probes = diagnostic_probes(kind, np.random.default_rng(3))
        run = CallableExecutor(func).run(RunRequest("", "f", tuple(p.call for p in probes)))
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
    assert verdict.status == VerdictStatus.FAILED
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
        assert verdict.status == VerdictStatus.PASSED, (func.__name__, verdict.to_dict())
        assert verdict.diagnosis == ()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**63 - 1), data=st.data())
def test_wrong_implementations_are_named_on_any_seed(seed, data):
    impl = data.draw(st.sampled_from(WRONG_IMPLEMENTATIONS))
    verdict = grade(
        spec=builtin_spec(impl.kind), code="", seed=seed, executor=CallableExecutor(impl.func)
    )
    assert verdict.status == VerdictStatus.FAILED
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
    assert verdict.status == VerdictStatus.FAILED
    assert "hardcoded-scale" in verdict.diagnosis


# --- real students' code: batch axes, fixed axes, overflow, rounding, layout ------------------


NEW_CODES = {
    "mask-wrong-fill",
    "weights-transposed",
    "missing-projections",
    "rounded-output",
    "batch-transpose",
    "batch-np-dot",
    "batch-fixed-ndim",
    "batch-unsupported",
}


def diagnosis_of(kind, func, seed=0):
    verdict = grade(spec=builtin_spec(kind), code="", seed=seed, executor=CallableExecutor(func))
    assert verdict.status == VerdictStatus.FAILED, verdict.to_dict()
    return verdict.diagnosis


def test_every_code_has_an_explanation_and_a_stable_anchor():
    assert set(CODES) >= NEW_CODES
    anchors = [MISCONCEPTIONS[c].anchor for c in CODES]
    assert len(set(anchors)) == len(CODES)
    for code in CODES:
        m = MISCONCEPTIONS[code]
        assert m.anchor == f"misconception-{code}"
        assert m.title and len(m.explanation) > 80
        assert misconception_describe(code)["anchor"] == m.anchor


def test_grading_still_makes_one_run_with_the_batched_diagnostic_calls():
    runs = []
    n_calls = []

    class Counting(CallableExecutor):
        def start(self, request):
            runs.append(request)
            return super().start(request)

        def _calls(self, calls):
            n_calls.append(len(calls))
            return super()._calls(calls)

    from grader.engine.diagnosis import diagnostic_probes

    spec = builtin_spec(reference.KIND_ATTENTION)
    # A failing submission: only its run has the diagnosis's calls (as its second phase).
    grade(spec=spec, code="", seed=0, executor=Counting(attention_3d_only_missing_scale))
    probes = diagnostic_probes(reference.KIND_ATTENTION, np.random.default_rng(0))
    assert len(runs) == 1
    assert n_calls[1] == len(fixed_probes(reference.KIND_ATTENTION))
    assert sum(n_calls) > len(probes) > 3 * 8  # every 2-D probe also with one and two batch axes
    assert {p.form for p in probes} == {0, 1, 2}


def attention_3d_only_missing_scale(Q, K, V, mask=None):
    scores = Q @ K.transpose(0, 2, 1)  # 3-D only, and no scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_4d_only_mask_inverted(Q, K, V, mask=None):
    _b, _h, _n, d_k = Q.shape
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, -1e9, scores)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def mha_3d_only_model_width(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    b, n, d = X.shape
    dh = d // n_heads
    q, k, v = ((X @ w).reshape(b, n, n_heads, dh).transpose(0, 2, 1, 3) for w in (W_q, W_k, W_v))
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    o = (w / w.sum(axis=-1, keepdims=True)) @ v
    return o.transpose(0, 2, 1, 3).reshape(b, n, d) @ W_o


@pytest.mark.parametrize(
    "kind,func,expected",
    [
        (reference.KIND_ATTENTION, attention_3d_only_missing_scale, ("missing-scale",)),
        (reference.KIND_ATTENTION, attention_4d_only_mask_inverted, ("mask-inverted",)),
        (reference.KIND_MULTI_HEAD, mha_3d_only_model_width, ("scale-by-model-width",)),
    ],
    ids=lambda x: getattr(x, "__name__", None),
)
def test_mistakes_hidden_behind_the_batch_bug_are_found(kind, func, expected):
    assert diagnosis_of(kind, func) == (*expected, "batch-fixed-ndim")


def attention_dot_t_sqrt_d_v(Q, K, V, mask=None):
    scores = np.dot(Q, K.T) / np.sqrt(V.shape[-1])  # 2-D only, and the wrong dimension
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return np.dot(w / w.sum(axis=-1, keepdims=True), V)


class SourceLineExecutor(CallableExecutor):
    """Errors carry the failing line, as the sandbox's student tracebacks do."""

    LINE = "    scores = np.dot(Q, K.T) / np.sqrt(V.shape[-1])"

    def _one(self, call):
        result = super()._one(call)
        if result.error is None:
            return result
        frame = f'Traceback (most recent call last):\n  File "submission.py", line 4\n{self.LINE}\n'
        return CallResult(error=frame + result.error)


def test_two_dimensional_code_is_diagnosed_in_2d_and_named_for_its_transpose():
    spec = builtin_spec(reference.KIND_ATTENTION)
    executor = SourceLineExecutor(attention_dot_t_sqrt_d_v)
    verdict = grade(spec=spec, code="", seed=0, executor=executor)
    assert verdict.diagnosis == ("wrong-dimension", "batch-transpose")
    # Without the line (the cause unknown), the batch failure is still named.
    assert diagnosis_of(reference.KIND_ATTENTION, attention_dot_t_sqrt_d_v) == (
        "wrong-dimension",
        "batch-unsupported",
    )


def softmax_math_exp_rows(x, axis=-1):
    return np.array([[math.exp(v) / sum(math.exp(u) for u in row) for v in row] for row in x])


def softmax_axis_0(x, axis=-1):
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def test_overflow_that_raises_is_unstable_softmax():
    diagnosis = diagnosis_of(reference.KIND_SOFTMAX, softmax_math_exp_rows)
    assert "unstable-softmax" in diagnosis
    assert "softmax-wrong-axis" in diagnosis  # rows only, whatever the axis
    assert "batch-fixed-ndim" in diagnosis  # a matrix only


def test_a_fixed_axis_is_decided_by_what_the_outputs_are():
    assert diagnosis_of(reference.KIND_SOFTMAX, softmax_axis_0) == ("softmax-wrong-axis",)


def attention_rounded_missing_scale(Q, K, V, mask=None):
    return np.round(w_missing_scale(Q, K, V, mask), 3)


def w_missing_scale(Q, K, V, mask=None):
    from grader.engine.kinds.attention_mistakes import attention_missing_scale

    return attention_missing_scale(Q, K, V, mask)


def test_rounding_is_named_and_does_not_hide_another_mistake():
    diagnosis = diagnosis_of(reference.KIND_ATTENTION, attention_rounded_missing_scale)
    assert diagnosis == ("missing-scale", "rounded-output")


def test_a_rounded_but_right_output_is_described_as_rounded():
    from grader.engine.kinds.softmax_mistakes import softmax_rounded

    verdict = grade(
        spec=builtin_spec(reference.KIND_SOFTMAX),
        code="",
        seed=0,
        executor=CallableExecutor(softmax_rounded),
    )
    values = next(c for c in verdict.checks if c.name == "softmax-values")
    assert not values.passed
    assert "only to 4 decimals" in values.message
    assert values.message.endswith(messages.ROUNDED_FIX)


def mha_pytorch_no_scale(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    from grader.engine.kinds.multi_head_mistakes import mha_variant

    return mha_variant(X, W_q, W_k, W_v, W_o, n_heads, mask, proj="transposed", scale="none")


def test_two_layout_and_scale_mistakes_at_once_are_both_named():
    assert diagnosis_of(reference.KIND_MULTI_HEAD, mha_pytorch_no_scale) == (
        "missing-scale",
        "weights-transposed",
    )


def test_no_mutation_says_it_could_not_run_when_the_function_raised():
    check = check_get("no-mutation")
    params = check.clean_params({})
    probes = check.prepare(params, np.random.default_rng(0), reference.KIND_ATTENTION)
    error = (
        'Traceback (most recent call last):\n  File "submission.py", line 2, in attention\n'
        "    n, d = Q.shape\nValueError: too many values to unpack (expected 2)\n"
    )
    outcome = check.judge(params, probes, [CallResult(error=error)], reference.KIND_ATTENTION)
    assert not outcome.passed
    assert outcome.message.startswith("This check could not run:")
    assert "changed" not in outcome.message


def test_a_traceback_in_a_message_shows_the_exception_first_and_the_students_lines():
    text = (
        "Traceback (most recent call last):\n"
        '  File "submission.py", line 7, in attention\n'
        "    return helper(Q)\n"
        "           ^^^^^^^^^\n"
        '  File "submission.py", line 4, in helper\n'
        "    raise ValueError('boom')\n"
        "ValueError: boom\n"
    )
    assert readable_error(text) == (
        "ValueError: boom\n"
        "  at line 4, in helper: raise ValueError('boom')\n"
        "  called from line 7, in attention: return helper(Q)"
    )
    chained = (
        "Traceback (most recent call last):\n"
        '  File "submission.py", line 3, in attention\n'
        "    x = d[1]\n"
        "KeyError: 1\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n"
        '  File "submission.py", line 5, in attention\n'
        "    raise ValueError('no')\n"
        "ValueError: no\n"
    )
    assert readable_error(chained).splitlines()[0] == "ValueError: no"
    assert readable_error("Your function returned NoneType") == "Your function returned NoneType"
    probe = Probe(call=None, what="the worked example")  # type: ignore[arg-type]
    message = output_problem(probe, CallResult(error=text))
    assert message.startswith("On the worked example, your function raised an error:\nValueError")


# --- fixed diagnostic inputs, memoised outcomes ------------------------------------------------


@pytest.mark.parametrize("kind", reference.KINDS)
def test_every_grade_uses_the_same_read_only_diagnostic_inputs(kind):
    from grader.engine.diagnosis import fixed_probes

    probes = fixed_probes(kind)
    assert probes is fixed_probes(kind)  # built once per process
    arrays = [a for p in probes for a in (*p.call.args, *p.call.kwargs.values())]
    arrays = [a for a in arrays if isinstance(a, np.ndarray)]
    assert not any(a.flags.writeable for a in arrays)
    # Only the demonstration's arguments are all whole numbers (nothing to make read-only).
    assert arrays or kind == reference.KIND_DEMONSTRATION


def test_a_second_diagnosis_runs_no_trusted_function_again(monkeypatch):
    from grader.engine import diagnosis
    from grader.engine.kinds.attention_mistakes import attention_missing_scale

    probes = diagnosis.fixed_probes(reference.KIND_ATTENTION)
    student = CallableExecutor(attention_missing_scale)
    results = student.run(RunRequest("", "", tuple(p.call for p in probes))).calls
    assert diagnosis.diagnose(reference.KIND_ATTENTION, probes, results) == ["missing-scale"]

    ran = []
    real = diagnosis._trusted_outcome
    monkeypatch.setattr(diagnosis, "_trusted_outcome", lambda f, c: ran.append(f) or real(f, c))
    assert diagnosis.diagnose(reference.KIND_ATTENTION, probes, results) == ["missing-scale"]
    assert ran == []


def _same_as_allclose(a, b, rtol, atol):
    # What _same computed before it was made fast: the definition it must keep.
    if a.shape != b.shape:
        return False
    fa, fb = np.isfinite(a), np.isfinite(b)
    if not np.array_equal(fa, fb):
        return False
    return bool(np.allclose(a[fa], b[fb], rtol=rtol, atol=atol))


_values = st.sampled_from([0.0, 1.0, -1.0, 1e-5, 0.5001, 1e3, np.inf, -np.inf, np.nan])


@settings(max_examples=300, deadline=None)
@given(
    a=st.lists(_values, min_size=1, max_size=6),
    noise=st.lists(st.sampled_from([0.0, 1e-6, 1e-4, 1e-2, np.nan, np.inf]), min_size=6),
)
def test_the_fast_comparison_agrees_with_allclose(a, noise):
    from grader.engine.diagnosis import MATCH_ATOL, MATCH_RTOL, _same

    x = np.array(a)
    with np.errstate(invalid="ignore"):
        y = x + np.array(noise[: len(a)])
    for u, v in ((x, y), (y, x), (x, x)):
        assert _same(u, v, MATCH_RTOL, MATCH_ATOL) == _same_as_allclose(
            u, v, MATCH_RTOL, MATCH_ATOL
        )


# --- A batch mistake is named only for a function right in 2-D and wrong with batch axes ---


def attention_softmax_over_queries(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    # axis=0: the queries in 2-D, the batch axis with batch axes. Wrong in both, for one reason.
    w = np.exp(scores - scores.max(axis=0, keepdims=True))
    return (w / w.sum(axis=0, keepdims=True)) @ V


def mha_softmax_over_axis_0(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    *batch, n, d_model = X.shape
    d_head = d_model // n_heads

    def heads(t):
        return np.swapaxes(t.reshape(*batch, n, n_heads, d_head), -3, -2)

    q, k, v = heads(X @ W_q), heads(X @ W_k), heads(X @ W_v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    w = np.exp(scores - scores.max(axis=0, keepdims=True))
    w = w / w.sum(axis=0, keepdims=True)
    return np.swapaxes(w @ v, -3, -2).reshape(*batch, n, d_model) @ W_o


def attention_flattens_the_batch(Q, K, V, mask=None):
    # Right in 2-D; with batch axes every query sees every batch element's keys.
    d_k = Q.shape[-1]
    q, k, v = Q.reshape(-1, d_k), K.reshape(-1, d_k), V.reshape(-1, V.shape[-1])
    scores = q @ k.T / np.sqrt(d_k)
    if mask is not None and Q.ndim == 2:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    out = (w / w.sum(axis=-1, keepdims=True)) @ v
    return out.reshape(*Q.shape[:-1], V.shape[-1])


def test_a_softmax_over_the_wrong_axis_is_not_said_to_lack_batch_support():
    assert diagnosis_of(reference.KIND_ATTENTION, attention_softmax_over_queries) == (
        "softmax-wrong-axis",
    )


def test_a_multi_head_softmax_over_axis_0_gets_no_batch_code():
    assert not {
        code
        for code in diagnosis_of(reference.KIND_MULTI_HEAD, mha_softmax_over_axis_0)
        if code.startswith("batch-")
    }


def test_a_function_right_in_2d_and_wrong_with_batch_axes_still_gets_it():
    assert diagnosis_of(reference.KIND_ATTENTION, attention_flattens_the_batch) == (
        "batch-unsupported",
    )


# --- A softmax written for matrices, and a mask that must have the scores' exact shape ---


class TracebackExecutor(CallableExecutor):
    """Errors carry a student's failing line, as the sandbox's tracebacks do."""

    def __init__(self, func, line):
        super().__init__(func)
        self.line = line

    def _one(self, call):
        result = super()._one(call)
        if result.error is None:
            return result
        frame = f'Traceback (most recent call last):\n  File "submission.py", line 9\n{self.line}\n'
        return CallResult(error=frame + result.error)


def traced_diagnosis(kind, func, line):
    verdict = grade(
        spec=builtin_spec(kind), code="", seed=0, executor=TracebackExecutor(func, line)
    )
    assert verdict.status == VerdictStatus.FAILED, verdict.to_dict()
    return verdict.diagnosis


def softmax_tiled_rows_any_axis(x, axis=-1):
    # Always the rows, whatever axis says: wrong in 2-D already, with axis=0.
    if x.ndim == 1:
        e = np.exp(x - np.max(x))
        return e / np.sum(e)
    e = np.exp(x - np.tile(np.max(x, axis=1), (x.shape[1], 1)).T)
    return e / np.tile(np.sum(e, axis=1), (x.shape[1], 1)).T


@pytest.mark.parametrize(
    "name,line",
    [
        ("softmax_tiled_rows", "    e = np.exp(x - np.tile(np.max(x, axis=1), (x.shape[1], 1)).T)"),
        ("softmax_columns_broadcast", "    x -= np.max(x, axis=axis)"),
    ],
)
def test_a_softmax_right_in_1d_and_2d_that_cannot_broadcast_in_3d_is_fixed_rank(name, line):
    # The broadcast error names no cause, and the line's `.T` is not a batch transpose here.
    func = next(i.func for i in WRONG_IMPLEMENTATIONS if i.name == name)
    assert traced_diagnosis(reference.KIND_SOFTMAX, func, line) == ("batch-fixed-ndim",)


def test_a_softmax_wrong_in_2d_is_named_for_that_and_not_for_its_3d_error():
    assert diagnosis_of(reference.KIND_SOFTMAX, softmax_tiled_rows_any_axis) == (
        "softmax-wrong-axis",
    )


def attention_mask_index_inverted(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores[mask] = -np.inf  # the exact shape, and the blocked keys taken for the allowed
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_mask_index_no_scale(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2)  # no scale either: wrong on every input, batched or not
    if mask is not None:
        scores[~mask] = -1e9
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ V


def attention_flattens_the_batch_masked(Q, K, V, mask=None):
    # The batch folded into the sequence axis: the mask (n, m) cannot cover (b·n, b·m) scores.
    d_k = Q.shape[-1]
    q, k, v = Q.reshape(-1, d_k), K.reshape(-1, d_k), V.reshape(-1, V.shape[-1])
    scores = q @ k.T / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return ((w / w.sum(axis=-1, keepdims=True)) @ v).reshape(*Q.shape[:-1], V.shape[-1])


def mha_flattens_the_batch(X, W_q, W_k, W_v, W_o, n_heads, mask=None):
    d_model = X.shape[-1]
    d_head = d_model // n_heads
    x = X.reshape(-1, d_model)  # every sequence of the batch run as one long sequence
    q, k, v = (np.swapaxes((x @ w).reshape(-1, n_heads, d_head), 0, 1) for w in (W_q, W_k, W_v))
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    out = np.swapaxes((w / w.sum(axis=-1, keepdims=True)) @ v, 0, 1).reshape(-1, d_model)
    return (out @ W_o).reshape(X.shape)


def test_a_mask_used_as_a_boolean_index_is_named_for_the_mask_not_the_batch():
    impl = next(i for i in WRONG_IMPLEMENTATIONS if i.name == "attention_mask_exact_shape")
    line = "        scores[~mask] = -np.inf"
    assert traced_diagnosis(reference.KIND_ATTENTION, impl.func, line) == ("mask-shape-exact",)
    assert not MISCONCEPTIONS["mask-shape-exact"].title.startswith("Batch")


@pytest.mark.parametrize(
    "func,other",
    [
        (attention_mask_index_inverted, "mask-inverted"),
        (attention_mask_index_no_scale, "missing-scale"),
    ],
    ids=lambda x: getattr(x, "__name__", x),
)
def test_the_exact_mask_shape_and_a_mistake_seen_in_2d_are_both_named(func, other):
    assert diagnosis_of(reference.KIND_ATTENTION, func) == (other, "mask-shape-exact")


@pytest.mark.parametrize(
    "kind,func",
    [
        (reference.KIND_ATTENTION, attention_flattens_the_batch_masked),
        (reference.KIND_MULTI_HEAD, mha_flattens_the_batch),
    ],
    ids=lambda x: getattr(x, "__name__", x),
)
def test_a_batch_folded_into_the_sequence_is_not_taken_for_an_exact_mask(kind, func):
    # Batched copies of one input hide the folding (their tokens repeat); the mask raises
    # only as a consequence. Unrelated batch elements show the batch mistake.
    assert diagnosis_of(kind, func) == ("batch-unsupported",)
