"""Run before Submit: the student's function on the visible examples and on a small input of
their own, shown beside the trusted reference. No Django imports.

A trial never sees a hidden input or a check: its cases are the public examples of the kind's
module (``grader.engine.kinds``: the 3-token worked example of the question page, a masked case
and a batched case) and what the student typed, bounded tightly (``trial_args.MAX_DIM``,
``trial_args.MAX_ELEMENTS``). Each kind parses its own custom input with ``trial_args``. The
executor (the sandbox) computes the student's outputs; the reference and the comparison run
here, outside it.

A custom input is a JSON object, one entry per argument of the entry point:
- an array as its values (a nested list) or as ``{"shape": [...]}`` (random values from
  ``seed``, rounded to two decimals so the student can read them);
- a mask as a nested list of booleans, or ``"causal"``;
- an integer argument (``n_heads``, ``axis``) as a number;
- ``"seed"``: the seed of the random values (default 0).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from grader.engine.checks.base import readable_error
from grader.engine.executors.base import (
    CallResult,
    Executor,
    Limits,
    RunRequest,
    RunStatus,
    run_whole,
)
from grader.engine.kinds import KINDS, Kind, reference_evaluate
from grader.engine.trial_args import (
    MSG_BAD_INT,
    MSG_BAD_SHAPE,
    ROLE_INT,
    ROLE_MASK,
    ArgSpec,
    TrialCase,
    TrialInputError,
    array_view,
    int_value,
    shape_text,
)

# Bounds of a custom input beyond each argument's (``trial_args``).
MAX_SEED = 2**31 - 1
MAX_FIELD_CHARS = 20_000  # one typed field on the page
# "Matches" means what the hidden value checks accept (grader.engine.checks.common).
RTOL = 1e-4
ATOL = 1e-5

# Student-facing messages (tests assert on them).
MSG_NOT_AN_OBJECT = "The custom input must be a JSON object with one entry per argument."
MSG_UNKNOWN_ARGUMENT = "Unknown argument {name!r}: this function takes {names}."
MSG_MISSING_ARGUMENT = "{name} is missing: give its values (a nested list) or its shape."
MSG_BAD_SEED = f"The seed must be a whole number from 0 to {MAX_SEED}."
MSG_FIELD_TOO_LONG = f"{{name}}: at most {MAX_FIELD_CHARS} characters."
MSG_BAD_JSON = "{name}: this is not valid JSON ({error})."
MSG_NO_TRIALS = "This exercise has no visible examples to run."

# Per case, when the student's call did not give a comparable output.
MSG_NOT_RUN = "Not run: {reason}"
MSG_NOT_RUN_DEFAULT = "the run stopped before this example."
MSG_NOT_NUMERIC = "Your function returned {got}, not a numeric array."
MSG_SHAPE = "Your output has shape {got}; the expected shape is {expected}."
MSG_NOT_FINITE = "Your output holds NaN or infinity."
MSG_INTERNAL = "The runner had an internal problem; this is not your fault. Please run again."

# The report's overall status.
STATUS_OK = "ok"  # the module loaded; each case has its outcome
STATUS_ERROR = "error"  # the code could not be run at all (syntax error, no entry point, ...)
STATUS_INTERNAL = "internal"  # ours


# --- The visible examples --------------------------------------------------------------------


def _kind(kind: str) -> Kind | None:
    return KINDS.get(kind)


def visible_examples(kind: str) -> list[TrialCase]:
    """The public examples of an exercise kind (fresh arrays on each call)."""
    found = _kind(kind)
    return found.visible_examples() if found else []


def visible_examples_view(kind: str) -> list[dict[str, Any]]:
    """The examples as the statement shows them: inputs and the reference's output."""
    return [
        {
            "name": case.name,
            "title": case.title,
            "about": case.about,
            "inputs": case.inputs_view(),
            "expected": array_view(trial_expected(kind, case)),
        }
        for case in visible_examples(kind)
    ]


# --- A custom input ----------------------------------------------------------------------------


def arguments_of(kind: str) -> tuple[ArgSpec, ...]:
    found = _kind(kind)
    return found.arguments if found else ()


def trial_spec_from_fields(kind: str, fields: Mapping[str, str]) -> dict[str, Any] | None:
    """The custom input as typed on the page (one text per argument, and the seed), as the
    JSON object the API takes; None when every field is blank (run the examples only).

    A text starting with ``[`` is JSON values; ``causal`` is a causal mask; anything else in
    an array field is a shape (``3, 4``, ``3x4`` or ``(3, 4)``).
    """
    spec: dict[str, Any] = {}
    for arg in arguments_of(kind):
        text = (fields.get(arg.name) or "").strip()
        if not text:
            continue
        if len(text) > MAX_FIELD_CHARS:
            raise TrialInputError(MSG_FIELD_TOO_LONG.format(name=arg.name))
        if arg.role == ROLE_INT:
            spec[arg.name] = _int_text(arg.name, text, arg.low, arg.high)
        elif text.startswith("["):
            try:
                spec[arg.name] = json.loads(text)
            except (ValueError, RecursionError) as exc:
                raise TrialInputError(
                    MSG_BAD_JSON.format(name=arg.name, error=str(exc)[:80])
                ) from None
        elif arg.role == ROLE_MASK and text.lower() == "causal":
            spec[arg.name] = "causal"
        else:
            spec[arg.name] = {"shape": _shape_text(arg.name, text)}
    if not spec:
        return None
    seed_text = (fields.get("seed") or "").strip()
    if seed_text:
        spec["seed"] = _int_text("seed", seed_text, 0, MAX_SEED, MSG_BAD_SEED)
    return spec


def _int_text(name: str, text: str, low: int, high: int, message: str = MSG_BAD_INT) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise TrialInputError(message.format(name=name, low=low, high=high)) from None
    return int_value(name, value, low, high, message)


def _shape_text(name: str, text: str) -> list[int]:
    parts = text.strip("()[] ").replace("x", ",").replace("\u00d7", ",").split(",")
    parts = [p.strip() for p in parts]
    if parts and parts[-1] == "":  # "(3,)"
        parts = parts[:-1]
    if not parts or not all(p.isascii() and p.isdigit() and len(p) < 6 for p in parts):
        raise TrialInputError(MSG_BAD_SHAPE.format(name=name))
    return [int(p) for p in parts]


def trial_input_case(kind: str, spec: Any) -> TrialCase:
    """The custom input as a case to run, or TrialInputError saying what is wrong with it.

    Pure and seeded: the web process checks a request with it, the worker rebuilds the same
    arrays from the stored spec.
    """
    args_of = arguments_of(kind)
    if not args_of:
        raise TrialInputError(MSG_NO_TRIALS)
    if not isinstance(spec, dict):
        raise TrialInputError(MSG_NOT_AN_OBJECT)
    names = [a.name for a in args_of]
    for key in spec:
        if key != "seed" and key not in names:
            raise TrialInputError(
                MSG_UNKNOWN_ARGUMENT.format(name=str(key)[:40], names=", ".join(names))
            )
    seed = int_value("seed", spec.get("seed", 0), 0, MAX_SEED, MSG_BAD_SEED)
    for arg in args_of:
        if not arg.optional and spec.get(arg.name) is None:
            raise TrialInputError(MSG_MISSING_ARGUMENT.format(name=arg.name))
    rng = np.random.default_rng(seed)
    return _kind(kind).trial_case(spec, rng)  # type: ignore[union-attr]  # args_of: known


def trial_cases(kind: str, spec: Any | None) -> list[TrialCase]:
    """What a trial runs: the visible examples, then the custom input if there is one."""
    cases = visible_examples(kind)
    if spec is not None:
        cases.append(trial_input_case(kind, spec))
    return cases


# --- Running and comparing ---------------------------------------------------------------------


def trial_expected(kind: str, case: TrialCase) -> np.ndarray:
    """The reference's output on a case."""
    return reference_evaluate(kind, case.args)


def trial_compare(kind: str, case: TrialCase, result: CallResult | None, reason: str) -> dict:
    """One case's row: the student's output beside the reference's, and whether they match."""
    expected = trial_expected(kind, case)
    row: dict[str, Any] = {
        "name": case.name,
        "title": case.title,
        "about": case.about,
        "inputs": [{"name": i["name"], "shape": i["shape"]} for i in case.inputs_view()],
        "expected": array_view(expected),
        "output": None,
        "match": False,
        "max_abs_diff": None,
        "error": None,
    }
    if result is None:
        row["error"] = MSG_NOT_RUN.format(reason=reason or MSG_NOT_RUN_DEFAULT)
        return row
    if result.error is not None:
        row["error"] = readable_error(result.error)
        return row
    out = result.output
    if not isinstance(out, np.ndarray) or out.dtype.kind not in "biuf":
        got = f"dtype {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
        row["error"] = MSG_NOT_NUMERIC.format(got=got)
        return row
    row["output"] = array_view(out)
    if tuple(out.shape) != tuple(expected.shape):
        row["error"] = MSG_SHAPE.format(
            got=shape_text(out.shape), expected=shape_text(expected.shape)
        )
        return row
    out = out.astype(np.float64)
    if not np.isfinite(out).all():
        row["error"] = MSG_NOT_FINITE
        return row
    diff = float(np.max(np.abs(out - expected))) if out.size else 0.0
    row["max_abs_diff"] = diff
    row["match"] = bool(np.allclose(out, expected, rtol=RTOL, atol=ATOL))
    return row


def trial_execute(
    *,
    kind: str,
    entry_point: str,
    code: str,
    cases: Sequence[TrialCase],
    limits: Limits,
    executor: Executor,
) -> dict[str, Any]:
    """Run ``code`` once through ``executor`` on every case and compare each output with the
    reference, here. The report in plain JSON types, as ``TrialRun.result`` stores it."""
    if not cases:
        return {"status": STATUS_ERROR, "message": MSG_NO_TRIALS, "stdout": "", "cases": []}
    request = RunRequest(code, entry_point, tuple(c.call for c in cases), limits)
    run = run_whole(executor, request)
    if run.status == RunStatus.INTERNAL:
        return {"status": STATUS_INTERNAL, "message": MSG_INTERNAL, "stdout": "", "cases": []}
    if run.status != RunStatus.OK and not run.calls:
        # Nothing ran: a syntax error, no entry point, a crash at import, a limit at once.
        return {"status": STATUS_ERROR, "message": run.message, "stdout": run.stdout, "cases": []}
    results: list[CallResult | None] = list(run.calls)[: len(cases)]
    results += [None] * (len(cases) - len(results))
    return {
        "status": STATUS_OK,
        "message": run.message if run.status != RunStatus.OK else "",
        "stdout": run.stdout,
        "cases": [
            trial_compare(kind, case, result, run.message)
            for case, result in zip(cases, results, strict=True)
        ],
    }
