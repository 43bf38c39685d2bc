"""grader.engine.exercise_content: every number a seeded statement states about a check is the
value that check runs with (its parameters as the exercise sets them, or their defaults)."""

import re

import pytest

from grader.engine.checks import check_get
from grader.engine.exercise_content import EXERCISES
from grader.engine.inputs import WORKED_Q

_NUM = r"(\d+(?:\.\d+)?(?:e-?\d+)?)"
_LIST = r"(\d+(?:(?:, | and )\d+)*)"

# Per check: (a pattern of the statement, the parameters its groups state, in order).
STATED: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "worked-example": [(rf"to within {_NUM}", ("atol",))],
    "scale": [
        (rf"\$d_k\$ = {_LIST}", ("d_ks",)),
        (rf"relative tolerance of {_NUM} and an absolute tolerance of {_NUM}", ("rtol", "atol")),
    ],
    "saturation": [(r"at \$d_k = (\d+)\$", ("d_k",))],
    "stability": [(rf"magnitude {_NUM} and {_NUM}", ("magnitudes", "magnitudes"))],
    "mha-values": [(rf"relative tolerance {_NUM}, absolute {_NUM}", ("rtol", "atol"))],
    "mha-head-width": [(r"\$d_\{model\} = (\d+)\$ with (\d+) heads", ("d_model", "n_heads"))],
    "softmax-values": [(rf"relative tolerance {_NUM},\s+absolute {_NUM}", ("rtol", "atol"))],
    "backward-values": [
        (rf"relative tolerance of {_NUM}\s+and an absolute tolerance of {_NUM}", ("rtol", "atol"))
    ],
    "backward-vanishing": [
        (rf"standard deviation {_LIST}", ("scales",)),
        (rf"relative {_NUM}, down to {_NUM}", ("rtol", "atol")),
    ],
    "attention-backward-finite-differences": [
        (rf"alone, to a relative {_NUM} and an absolute {_NUM}", ("rtol", "atol"))
    ],
    "attention-backward-values": [
        (
            rf"reference within\s+a relative tolerance of {_NUM} and an absolute one of {_NUM}",
            ("rtol", "atol"),
        )
    ],
    "attention-backward-vanishing": [
        (rf"multiplied by {_LIST}", ("scales",)),
        (rf"reference's to {_NUM} per unit", ("atol",)),
        (rf"dV to a relative {_NUM}", ("rtol",)),
    ],
}


def _numbers(text: str) -> list[float]:
    return [float(n) for n in re.split(r", | and ", text)]


CASES = [
    pytest.param(exercise, spec, id=f"{exercise['slug']}:{spec['name']}")
    for exercise in EXERCISES
    for spec in exercise["checks"]
    if spec["name"] in STATED
]


@pytest.mark.parametrize("exercise,spec", CASES)
def test_the_statement_states_the_values_the_check_runs_with(exercise, spec):
    params = check_get(spec["name"]).clean_params(spec["params"])
    statement = exercise["statement"]
    for pattern, names in STATED[spec["name"]]:
        found = re.findall(pattern, statement)
        assert found, (pattern, exercise["slug"])
        for groups in found:
            groups = (groups,) if isinstance(groups, str) else groups
            stated: list[float] = []
            for name, text in zip(names, groups, strict=True):
                value = params[name]
                if isinstance(value, list):
                    stated.extend(_numbers(text))
                else:
                    assert float(text) == pytest.approx(value), (pattern, text, value)
            if stated:
                assert stated == pytest.approx([float(v) for v in params[names[0]]]), pattern


def test_the_statement_sizes_the_worked_example_as_its_arrays_are():
    attention = next(e for e in EXERCISES if e["slug"] == "scaled-dot-product-attention")
    n, d_k = WORKED_Q.shape
    assert f"({n} tokens, $d_k = {d_k}$)" in attention["statement"]


def test_every_seeded_check_has_its_stated_numbers_checked_or_states_none():
    stated_checks = {spec["name"] for e in EXERCISES for spec in e["checks"]} & set(STATED)
    assert stated_checks == set(STATED)
