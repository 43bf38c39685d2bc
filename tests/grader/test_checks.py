"""The check library, judged through the trusted in-process executor (no sandbox, no DB)."""

import numpy as np
import pytest

from grader.engine import messages, reference
from grader.engine.checks import CHECKS, ParamsError, check_get, checks_for_kind
from grader.engine.checks.attention import SCALE_FAILED
from grader.engine.executors.base import CallResult, RunRequest
from grader.engine.executors.trusted import NOT_AN_ARRAY, CallableExecutor
from grader.engine.kinds.attention_mistakes import (
    attention_divide_by_8,
    attention_mask_ignored,
    attention_missing_scale,
    attention_scales_q_in_place,
    attention_unnormalized,
)
from grader.engine.kinds.softmax_mistakes import softmax_naive

REFERENCES = {
    reference.KIND_ATTENTION: reference.attention,
    reference.KIND_MULTI_HEAD: reference.multi_head_attention,
    reference.KIND_SOFTMAX: reference.softmax,
    reference.KIND_SOFTMAX_BACKWARD: reference.softmax_backward,
    reference.KIND_ATTENTION_BACKWARD: reference.attention_backward,
    reference.KIND_DEMONSTRATION: reference.scaling_demonstration,
}


def run_check(name, func, kind=reference.KIND_ATTENTION, params=None, seed=0):
    check = check_get(name)
    cleaned = check.clean_params(params or {})
    probes = check.prepare(cleaned, np.random.default_rng(seed), kind)
    run = CallableExecutor(func).run(RunRequest("", "f", tuple(p.call for p in probes)))
    return check.judge(cleaned, probes, run.calls, kind)


# The custom check has no default source and refers its judgement to the instructor's code:
# tests/grader/test_checks_custom.py passes the reference through it.
@pytest.mark.parametrize(
    "name,kind",
    [
        (name, kind)
        for name, check in CHECKS.items()
        for kind in sorted(check.kinds)
        if name != "custom"
    ],
)
def test_reference_passes_every_check(name, kind):
    outcome = run_check(name, REFERENCES[kind], kind)
    assert outcome.passed, outcome.message


def test_every_kind_has_checks():
    for kind in reference.KINDS:
        assert checks_for_kind(kind)


def test_missing_scale_fails_scale_and_saturation_with_both_numbers():
    assert not run_check("scale", attention_missing_scale).passed
    outcome = run_check("saturation", attention_missing_scale)
    assert not outcome.passed
    assert "mean top weight of" in outcome.message
    assert "correctly scaled attention keeps a mean top weight of" in outcome.message
    # The unscaled function is nearly one-hot: its top weight is close to 1.
    top = float(outcome.message.split("mean top weight of ")[1].split(" ")[0])
    assert top > 0.9


def test_saturation_message_when_passing_reports_numbers():
    outcome = run_check("saturation", reference.attention)
    assert outcome.passed
    assert outcome.message.startswith("At d_k = 512")


def test_hardcoded_scale_is_right_at_64_only():
    outcome = run_check("scale", attention_divide_by_8)
    assert not outcome.passed
    assert outcome.message.startswith(
        SCALE_FAILED.split("{")[0] + "4, 16, 128, 256 and right at d_k = 64"
    )


def test_unnormalized_fails_normalisation():
    outcome = run_check("weights-normalized", attention_unnormalized)
    assert not outcome.passed
    assert "sum to 1" in outcome.message


def test_missing_scale_still_sums_to_one():
    # The division does not make the weights sum to one: the softmax does (wrong answer
    # "sums-to-one"), so this check passes without the scale.
    assert run_check("weights-normalized", attention_missing_scale).passed


def test_mask_ignored_is_caught_with_leak_message():
    outcome = run_check("mask", attention_mask_ignored)
    assert not outcome.passed
    assert "masked keys (mask False) must get zero weight" in outcome.message


def test_mutation_is_caught():
    outcome = run_check("no-mutation", attention_scales_q_in_place)
    assert not outcome.passed
    assert outcome.message == messages.MUTATED.format(arg="Q")


def test_unstable_softmax_fails_stability_with_nan_message():
    outcome = run_check("stability", softmax_naive, reference.KIND_SOFTMAX)
    assert not outcome.passed
    assert "NaN or infinity" in outcome.message


def test_nan_output_is_rejected():
    outcome = run_check(
        "scale", lambda Q, K, V, mask=None: np.full((Q.shape[0], V.shape[1]), np.nan)
    )
    assert not outcome.passed
    assert "NaN or infinity" in outcome.message


def test_non_numeric_result_is_rejected():
    outcome = run_check("worked-example", lambda Q, K, V, mask=None: "not an array")
    assert not outcome.passed
    assert NOT_AN_ARRAY.format(type="str", dtype="<U12") in outcome.message


def test_exception_is_reported():
    def boom(Q, K, V, mask=None):
        raise ValueError("shapes do not align")

    outcome = run_check("shapes", boom)
    assert not outcome.passed
    assert "your function raised an error" in outcome.message
    assert "shapes do not align" in outcome.message


def test_wrong_shape_message():
    outcome = run_check("worked-example", lambda Q, K, V, mask=None: Q @ K.T)
    assert not outcome.passed
    assert outcome.message == messages.SHAPE.format(
        what="the worked example (3 tokens, d_k = 4)", expected="(3, 2)", got="(3, 3)"
    )


def test_missing_result_is_reported_as_not_run():
    check = check_get("scale")
    params = check.clean_params({})
    probes = check.prepare(params, np.random.default_rng(0), "attention")
    outcome = check.judge(
        params, probes, [CallResult(output=np.zeros((8, 6)))] * len(probes), "attention"
    )
    assert not outcome.passed


def test_params_are_validated():
    scale = check_get("scale")
    assert scale.clean_params({})["d_ks"] == [4, 16, 64, 128, 256]
    assert scale.clean_params({"d_ks": [8, 32]})["d_ks"] == [8, 32]
    with pytest.raises(ParamsError) as err:
        scale.clean_params({"d_ks": "64", "rtol": -1, "bogus": 1})
    text = str(err.value)
    assert "d_ks" in text and "rtol" in text and "bogus: unknown parameter" in text
    with pytest.raises(ParamsError):
        check_get("mha-values").clean_params({"configs": [[8, 2, 1]]})
    with pytest.raises(ParamsError):
        check_get("stability").clean_params({"float32": 1})


def test_params_schema_lists_every_param():
    schema = check_get("saturation").params_schema()
    assert set(schema) == {"d_k", "n", "m", "top_tol", "entropy_tol"}
    assert schema["d_k"]["default"] == 512


def test_inputs_are_reproducible_from_the_seed():
    check = check_get("scale")
    params = check.clean_params({})
    a = check.prepare(params, np.random.default_rng(7), "attention")
    b = check.prepare(params, np.random.default_rng(7), "attention")
    for pa, pb in zip(a, b, strict=True):
        for xa, xb in zip(pa.call.args, pb.call.args, strict=True):
            np.testing.assert_array_equal(xa, xb)


def test_the_fast_closeness_test_is_allclose_exactly() -> None:
    from grader.engine.checks.base import _all_close

    inf, nan = np.inf, np.nan
    rng = np.random.default_rng(5)
    base = rng.standard_normal((4, 6))
    cases = [
        (base, base),
        (base + 1e-9, base),
        (base + 1e-3, base),
        (base * (1 + 2e-6), base),
        (np.where(base > 0, nan, base), base),
        (np.where(base > 0, inf, base), base),
        (base, np.where(base > 0, inf, base)),
        (np.where(base > 0, inf, base), np.where(base > 0, inf, base)),
        (np.where(base > 0, -inf, base), np.where(base > 0, inf, base)),
        (np.full((4, 6), 1e308), np.full((4, 6), -1e308)),
        (base[:1], base),  # broadcasting, as allclose does
        (np.zeros(0), np.zeros(0)),
    ]
    for out, expected in cases:
        for rtol, atol in ((1e-6, 1e-8), (0.0, 1e-3), (1e-2, 0.0)):
            with np.errstate(over="ignore", invalid="ignore"):
                expect = np.allclose(out, expected, rtol=rtol, atol=atol)
            assert _all_close(out, expected, rtol=rtol, atol=atol) == expect, (out, rtol, atol)
