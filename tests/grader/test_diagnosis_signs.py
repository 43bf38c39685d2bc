"""grader.engine.diagnosis_signs: what an error's text and the outputs show by themselves."""

import numpy as np
import pytest

from grader.engine.diagnosis_signs import effective_scale, rounded_decimals, text_cause


@pytest.mark.parametrize(
    "text,cause",
    [
        (
            'Traceback (most recent call last):\n  File "submission.py", line 5, in attention\n'
            "    scores = Q @ K.T / np.sqrt(d_k)\n             ~~^~~~~\n"
            "ValueError: matmul: Input operand 1 has a mismatch in its core dimension 0",
            "batch-transpose",
        ),
        (
            'Traceback (most recent call last):\n  File "submission.py", line 3, in attention\n'
            "    return np.dot(w, V)\nValueError: shapes (2,5,7) and (2,7,3) not aligned",
            "batch-np-dot",
        ),
        ("ValueError: too many values to unpack (expected 2)", "batch-fixed-ndim"),
        ("ValueError: axes don't match array", "batch-fixed-ndim"),
        (
            "numpy.exceptions.AxisError: axis 2 is out of bounds for array of dimension 2",
            "batch-fixed-ndim",
        ),
        ("ZeroDivisionError: float division by zero", None),
    ],
)
def test_the_cause_of_a_batch_failure_is_read_from_the_exception(text, cause):
    assert text_cause(text) == cause


def test_rounded_outputs_give_their_number_of_decimals():
    values = np.linspace(0.01, 0.99, 40)
    assert rounded_decimals([np.round(values, 3)]) == 3
    assert rounded_decimals([values * np.pi]) is None
    assert rounded_decimals([np.arange(40.0)]) is None  # whole numbers are not a rounding


def test_the_scale_a_row_of_weights_was_divided_by_is_recovered():
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    s = q @ k.T / 7.5
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    assert effective_scale(q, k, w) == pytest.approx(7.5)
    assert effective_scale(q, k, np.full((3, 5), 0.2)) is None  # not softmax(q kᵀ / c)
