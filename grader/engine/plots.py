"""Pictures of a student's own function for the result page of a submission.

Pure: numpy only, no Django. Each kind's module (``grader.engine.kinds``) draws its pictures'
inputs and builds its pictures with ``grader.engine.pictures``; this module asks the registry
for them. Two halves, used by the worker around one sandbox run:

* ``plot_calls(kind)`` builds the calls to run the student's function on: inputs generated for
  the pictures with a fixed seed of their own (never the hidden grading inputs), each called
  with V = identity (or its multi-head equivalent) so the output *is* the attention weights.
* ``plots_from_results(kind, results)`` turns the student's outputs into a JSON-serialisable
  dict (format below), next to the trusted reference computed here on the same inputs.

The dict (``version`` 1), read by ``templates/explorables/submission_plots.html``::

    {
      "version": 1, "kind": "attention",
      "example": {                       # heatmaps: student vs reference on a visible example
        "title": str, "note": str, "rows": ["q1", ...], "row_prefix": "q", "cols": ["k1", ...],
        "d_k": 16,
        "student": [[float|None]] | None, "reference": [[float]],
        "student_row_sums": [float|None] | None, "reference_row_sums": [float],
        "max_abs_diff": float | None, "error": str | None,
      },
      "saturation": {                    # mean top weight vs d_k (None for softmax)
        "d_k": [4, 8, ..., 512], "student": [float|None], "reference": [float],
        "uniform": 1/keys, "queries": int, "keys": int, "label": "d_k" | "d_head",
        "row": {"d_k": 512, "cols": [...], "student": [...] | None, "reference": [...]},
        "error": str | None,
      } | None,
      "stability": {...} | None,         # softmax only: the same heatmap pair at scores ×1000
      "vanishing": {                     # softmax backward only: the largest gradient entry
        "title": str, "note": str, "scales": [1.0, ..., 80.0], "tokens": [...],
        "student": [float|None], "reference": [float], "error": str | None,
      } | None,
      "pictures": {code: {"picture": "saturation"|"row"|"example"|"stability"|"vanishing",
                   "caption": str}},
      "diagnosis": [code, ...],          # the codes passed in, if any
      "misconception": code,             # set by the worker (first diagnosis code), optional
    }

Floats are rounded to 4 decimals (the vanishing curve's to 4 significant digits: it spans
thirty orders of magnitude); NaN and infinities become None (JSON has neither).
"""

# ruff: noqa: RUF002 - the format of the pictures writes its multiplication sign on purpose

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from grader.engine.executors.base import Call, CallResult
from grader.engine.kinds import KINDS, Kind
from grader.engine.pictures import PICTURES


def _kind(kind: str) -> Kind | None:
    return KINDS.get(kind)


def picture_for(code: str, kind: str = "attention") -> dict[str, str] | None:
    """The picture that shows a misconception for this kind of exercise, if there is one."""
    found = _kind(kind)
    if found is not None and code in found.pictures:
        return PICTURES[code]
    return None


def plot_calls(kind: str) -> list[Call]:
    """The calls to run the student's function on for the pictures, in a fixed order."""
    return list(_plot_calls(kind))


# The pictures' inputs are fixed, so each worker draws them (and computes their reference
# weights) once: drawing the sweep alone costs more than grading a correct submission.
@functools.cache
def _plot_calls(kind: str) -> tuple[Call, ...]:
    found = _kind(kind)
    return found.plot_calls() if found else ()


def plots_from_results(
    kind: str, results: Sequence[CallResult], diagnosis: Sequence[str] = ()
) -> dict[str, Any]:
    """The pictures' data from the student's results of ``plot_calls(kind)``, in order.

    ``results`` may be shorter than the calls (a limit ended the run part-way): the missing
    pictures say so. ``diagnosis``, the misconception codes the grader named, is optional.
    Returns {} for an unknown kind.
    """
    found = _kind(kind)
    if found is None:
        return {}
    body = found.plots(results)
    body.setdefault("stability", None)
    body.setdefault("vanishing", None)
    pictures = {code: dict(PICTURES[code]) for code in sorted(found.pictures)}
    return {"version": 1, "kind": kind, **body, "pictures": pictures, "diagnosis": list(diagnosis)}
