"""The library of named, parameterised hidden checks. No Django imports.

Each check builds its calls from (params, a numpy Generator seeded from the stored seed) and
judges the executor's results against the trusted reference (``engine.reference``). An exercise
lists the checks it uses, by name, with parameters and weights (``ExerciseCheck`` rows).
"""

from __future__ import annotations

from grader.engine.checks.attention import Mask, Saturation, Scale, Shapes, WorkedExample
from grader.engine.checks.attention_backward import (
    AttentionBackwardFiniteDifferences,
    AttentionBackwardMask,
    AttentionBackwardValues,
    AttentionBackwardVanishing,
)
from grader.engine.checks.base import (
    Check,
    CheckNotRun,
    Outcome,
    Param,
    ParamsError,
    Probe,
    Referral,
    probe_expected,
)
from grader.engine.checks.common import JudgeInternalError, NoMutation, Stability, WeightsNormalized
from grader.engine.checks.custom import Custom
from grader.engine.checks.demonstration import DemoOverflow, DemoTrend, DemoValues
from grader.engine.checks.multi_head import HeadWidth, MultiHeadShapes, MultiHeadValues
from grader.engine.checks.softmax import SoftmaxAxis, SoftmaxValues
from grader.engine.checks.softmax_backward import (
    BackwardBatchAxes,
    BackwardValues,
    BackwardVanishing,
)

_ALL: tuple[Check, ...] = (
    WorkedExample(),
    Shapes(),
    Scale(),
    Saturation(),
    Stability(),
    WeightsNormalized(),
    Mask(),
    NoMutation(),
    MultiHeadValues(),
    HeadWidth(),
    MultiHeadShapes(),
    SoftmaxValues(),
    SoftmaxAxis(),
    BackwardValues(),
    BackwardBatchAxes(),
    BackwardVanishing(),
    AttentionBackwardFiniteDifferences(),
    AttentionBackwardValues(),
    AttentionBackwardMask(),
    AttentionBackwardVanishing(),
    DemoValues(),
    DemoTrend(),
    DemoOverflow(),
    Custom(),
)

CHECKS: dict[str, Check] = {check.name: check for check in _ALL}


class UnknownCheck(KeyError):
    pass


def check_get(name: str) -> Check:
    try:
        return CHECKS[name]
    except KeyError:
        raise UnknownCheck(name) from None


def checks_for_kind(kind: str) -> list[Check]:
    """The checks that can judge an exercise of this kind, in library order."""
    return [check for check in _ALL if kind in check.kinds]


__all__ = [
    "CHECKS",
    "Check",
    "CheckNotRun",
    "JudgeInternalError",
    "Outcome",
    "Param",
    "ParamsError",
    "Probe",
    "Referral",
    "UnknownCheck",
    "check_get",
    "checks_for_kind",
    "probe_expected",
]
