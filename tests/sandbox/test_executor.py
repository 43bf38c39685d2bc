"""The sandbox on honest and merely wrong code: verdicts, messages, outputs, stdout."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from grader.engine.executors.base import Call, Limits, RunStatus
from grader.engine.sandbox import messages as M
from tests.sandbox.conftest import (
    CORRECT_ATTENTION,
    FencedSandbox,
    assert_correct,
    reference_attention,
    small_calls,
)

INTERNAL_NAMES = ("/sandbox", "zygote", "layers.py", "protocol", "site-packages", "/venv", "numpy")


def test_correct_function(sandbox: FencedSandbox) -> None:
    calls = small_calls(5)
    result = sandbox.run(code=CORRECT_ATTENTION, entry_point="attention", calls=calls)
    assert_correct(result, calls)
    assert result.message == ""
    assert result.stdout == ""


def test_kwargs_mask_and_scalars(sandbox: FencedSandbox) -> None:
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(4, 16)) for _ in range(3))
    mask = np.tril(np.ones((4, 4), dtype=bool))
    calls = [
        Call(args=(q, k, v), kwargs={"mask": mask}),
        Call(args=(q, k, v), kwargs={"mask": None}),
    ]
    result = sandbox.run(code=CORRECT_ATTENTION, entry_point="attention", calls=calls)
    assert_correct(result, calls)
    np.testing.assert_allclose(result.calls[0].output, reference_attention(q, k, v, mask))


def test_many_calls_in_order_and_dtypes(sandbox: FencedSandbox) -> None:
    code = "import numpy as np\ndef f(x, n):\n    return np.asarray(x * n, dtype=x.dtype)\n"
    arrays = [
        (np.arange(6) % 3).astype(dt).reshape(2, 3) for dt in ("f4", "f8", "i8", "u1", "bool")
    ]
    calls = [Call(args=(a, 2)) for a in arrays]
    result = sandbox.run(code=code, entry_point="f", calls=calls)
    assert result.status == RunStatus.OK
    for a, res in zip(arrays, result.calls, strict=True):
        assert type(res.output) is np.ndarray
        assert res.output.dtype == a.dtype
        np.testing.assert_array_equal(res.output, np.asarray(a * 2, dtype=a.dtype))


def test_scalar_and_list_returns_are_arrays(sandbox: FencedSandbox) -> None:
    code = "def f(i):\n    return [1.5, 2.5] if i else 3\n"
    result = sandbox.run(code=code, entry_point="f", calls=[Call(args=(1,)), Call(args=(0,))])
    assert result.status == RunStatus.OK
    np.testing.assert_array_equal(result.calls[0].output, [1.5, 2.5])
    assert result.calls[1].output.shape == ()
    assert int(result.calls[1].output) == 3


def test_syntax_error_reports_line(sandbox: FencedSandbox) -> None:
    code = "import numpy as np\n\ndef attention(Q, K, V):\n    return (Q @ K.T\n"
    result = sandbox.run(code=code, entry_point="attention", calls=small_calls(1))
    assert result.status == RunStatus.SYNTAX_ERROR
    assert result.calls == []
    assert result.message.startswith("Syntax error on line 4: ")
    assert "never closed" in result.message


def test_indentation_error_is_a_syntax_error(sandbox: FencedSandbox) -> None:
    result = sandbox.run(code="def f():\nreturn 1\n", entry_point="f", calls=[Call(args=())])
    assert result.status == RunStatus.SYNTAX_ERROR
    assert result.message.startswith("Syntax error on line 2: ")


def test_null_byte_source(sandbox: FencedSandbox) -> None:
    result = sandbox.run(code="x = 1\0\n", entry_point="f", calls=[])
    assert result.status == RunStatus.SYNTAX_ERROR


def test_missing_entry_point(sandbox: FencedSandbox) -> None:
    result = sandbox.run(code="def other():\n    pass\n", entry_point="attention", calls=[])
    assert result.status == RunStatus.MISSING_ENTRY_POINT
    assert result.message == M.MSG_MISSING_ENTRY_POINT.format(entry_point="attention")


def test_entry_point_not_callable(sandbox: FencedSandbox) -> None:
    result = sandbox.run(code="attention = 3\n", entry_point="attention", calls=[])
    assert result.status == RunStatus.MISSING_ENTRY_POINT


def test_exception_traceback_shows_only_student_frames(sandbox: FencedSandbox) -> None:
    code = (
        "import numpy as np\n"
        "\n"
        "def helper(x):\n"
        "    raise ValueError('boom ' + str(x.shape))\n"
        "\n"
        "def attention(Q, K, V, mask=None):\n"
        "    return helper(Q)\n"
    )
    result = sandbox.run(code=code, entry_point="attention", calls=small_calls(2))
    assert result.status == RunStatus.OK  # the module ran; each call carries its error
    assert len(result.calls) == 2
    for res in result.calls:
        assert res.output is None
        assert res.error is not None
        assert res.error.startswith("Traceback (most recent call last):")
        assert 'File "submission.py", line 7, in attention' in res.error
        assert 'File "submission.py", line 4, in helper' in res.error
        assert "raise ValueError('boom ' + str(x.shape))" in res.error
        assert res.error.rstrip().endswith("ValueError: boom (8, 64)")
        for name in INTERNAL_NAMES:
            assert name not in res.error


def test_exception_inside_numpy_hides_numpy_frames(sandbox: FencedSandbox) -> None:
    code = "import numpy as np\ndef attention(Q, K, V, mask=None):\n    return np.dot(Q, V)\n"
    result = sandbox.run(code=code, entry_point="attention", calls=small_calls(1))
    err = result.calls[0].error
    assert err is not None
    assert 'File "submission.py", line 3, in attention' in err
    assert "ValueError: shapes (8,64) and (8,64) not aligned" in err
    assert "site-packages" not in err and "/venv" not in err


def test_exception_while_loading_is_import_error(sandbox: FencedSandbox) -> None:
    code = "import numpy as np\nimport no_such_module_here\n"
    result = sandbox.run(code=code, entry_point="attention", calls=small_calls(1))
    assert result.status == RunStatus.IMPORT_ERROR
    assert result.message.startswith(M.MSG_IMPORT_ERROR.split("{")[0])
    assert "ModuleNotFoundError: No module named 'no_such_module_here'" in result.message
    assert 'File "submission.py", line 2, in <module>' in result.message
    assert "/sandbox" not in result.message


def test_non_numeric_returns(sandbox: FencedSandbox) -> None:
    code = "def f(i):\n    return ['hello', None, {'a': 1}, [[1, 2], [3]], 1 + 2j, object()][i]\n"
    calls = [Call(args=(i,)) for i in range(6)]
    result = sandbox.run(code=code, entry_point="f", calls=calls)
    assert result.status == RunStatus.OK
    assert result.calls[0].error == M.MSG_NOT_NUMERIC.format(type="str", dtype="<U5")
    assert result.calls[1].error == M.MSG_NOT_NUMERIC.format(type="NoneType", dtype="object")
    assert result.calls[2].error == M.MSG_NOT_NUMERIC.format(type="dict", dtype="object")
    # A ragged list raises inside np.asarray: reported as that exception.
    assert result.calls[3].error is not None and "ValueError" in result.calls[3].error
    assert result.calls[4].error == M.MSG_NOT_NUMERIC.format(type="complex", dtype="complex128")
    assert result.calls[5].error == M.MSG_NOT_NUMERIC.format(type="object", dtype="object")
    assert all(c.output is None for c in result.calls)


def test_stdout_is_captured(sandbox: FencedSandbox) -> None:
    code = (
        "import sys\n"
        "print('loading')\n"
        "def f(x):\n"
        "    print('value', x)\n"
        "    print('<b>err</b>', file=sys.stderr)\n"
        "    return x\n"
    )
    result = sandbox.run(code=code, entry_point="f", calls=[Call(args=(1,)), Call(args=(2,))])
    assert result.status == RunStatus.OK
    # Captured verbatim; escaping for HTML is the caller's job.
    for line in ("loading", "value 1", "value 2", "<b>err</b>"):
        assert line in result.stdout


def test_stdout_is_capped_but_run_continues(sandbox: FencedSandbox) -> None:
    code = "def f(x):\n    print('y' * 200_000)\n    return x\n"
    result = sandbox.run(code=code, entry_point="f", calls=[Call(args=(1,))])
    assert result.status == RunStatus.OK
    assert result.stdout.startswith("y" * 1000)
    assert result.stdout.endswith("[... output truncated after 64 KiB]")
    assert len(result.stdout) < 64 * 1024 + 100


def test_limit_mid_run_keeps_finished_calls(sandbox: FencedSandbox) -> None:
    code = "def f(i):\n    while i == 2:\n        pass\n    return i\n"
    calls = [Call(args=(i,)) for i in range(4)]
    result = sandbox.run(code=code, entry_point="f", calls=calls, limits=Limits(cpu_seconds=1))
    assert result.status == RunStatus.CPU_LIMIT
    assert result.message == M.MSG_CPU_LIMIT.format(seconds=1)
    assert [int(c.output) for c in result.calls] == [0, 1]


def test_return_inputs_shows_mutation(sandbox: FencedSandbox) -> None:
    code = "def f(x, y):\n    x[0] = 99\n    return x.sum()\n"
    x = np.zeros(3)
    result = sandbox.run(
        code=code, entry_point="f", calls=[Call(args=(x, np.ones(2)), return_inputs=True)]
    )
    assert result.status == RunStatus.OK
    res = result.calls[0]
    assert float(res.output) == 99.0
    assert res.inputs_after is not None
    np.testing.assert_array_equal(res.inputs_after[0], [99, 0, 0])
    np.testing.assert_array_equal(res.inputs_after[1], [1, 1])
    np.testing.assert_array_equal(x, [0, 0, 0])  # the trusted side's array is untouched


def test_inputs_are_fresh_per_call(sandbox: FencedSandbox) -> None:
    code = "def f(x):\n    x += 1\n    return x.copy()\n"
    x = np.zeros(2)
    result = sandbox.run(code=code, entry_point="f", calls=[Call(args=(x,)), Call(args=(x,))])
    np.testing.assert_array_equal(result.calls[1].output, [1, 1])


def test_lazy_imports_work_after_the_uid_drop(sandbox: FencedSandbox) -> None:
    code = (
        "import numpy as np, json, fractions, decimal, statistics, numpy.polynomial\n"
        "def f(x):\n"
        "    return np.fft.fft(x).real + np.linalg.norm(x) + np.random.default_rng(0).random()\n"
    )
    result = sandbox.run(code=code, entry_point="f", calls=[Call(args=(np.ones(4),))])
    assert result.status == RunStatus.OK, result.message
    assert result.calls[0].output.shape == (4,)


def test_empty_environment_and_no_project_paths(sandbox: FencedSandbox) -> None:
    code = (
        "import os, sys\n"
        "def f():\n"
        "    print(sorted(os.environ), os.getcwd(), sys.argv)\n"
        "    return 0\n"
    )
    result = sandbox.run(code=code, entry_point="f", calls=[Call(args=())])
    assert result.status == RunStatus.OK
    assert "/work" not in result.stdout
    assert "SECRET" not in result.stdout and "DATABASE" not in result.stdout


def test_self_check_passes(sandbox: FencedSandbox) -> None:
    starts = sandbox.call("self_check")
    assert starts >= 1


def test_warm_grade_is_fast(sandbox: FencedSandbox) -> None:
    calls = small_calls(10)
    times = []
    for _ in range(10):
        assert_correct(
            sandbox.run(code=CORRECT_ATTENTION, entry_point="attention", calls=calls), calls
        )
        times.append(sandbox.last_seconds)
    # Generous (shared 2-core machine): the benchmark measures properly.
    assert sorted(times)[len(times) // 2] < 0.1


@pytest.mark.parametrize("slot", [None])
def test_fails_closed_when_a_layer_cannot_be_applied(
    sandbox: FencedSandbox, slot: int | None
) -> None:
    # Children configured to keep uid 0: the uid-drop layer refuses, nothing runs.
    refused, result = sandbox.call(
        "root_uid",
        slot=slot,
        run={
            "code": CORRECT_ATTENTION,
            "entry_point": "attention",
            "calls": small_calls(1),
            "limits": Limits(),
        },
    )
    assert "self-check" in refused and "refusing to run student code as root" in refused
    assert result.status == RunStatus.INTERNAL
    assert result.message == M.MSG_INTERNAL
    assert result.calls == []


def test_a_run_its_child_cannot_start_is_internal_and_logged(sandbox: FencedSandbox) -> None:
    # None of the student's code ran: never charged to them (it used to be "Your code exited
    # (exit status 70)"), and the worker's log says why.
    result, logged = sandbox.call(
        "unstartable",
        run={
            "code": CORRECT_ATTENTION,
            "entry_point": "attention",
            "calls": small_calls(1),
            "limits": Limits(),
        },
    )
    assert result.status == RunStatus.INTERNAL
    assert result.message == M.MSG_INTERNAL
    assert result.calls == []
    assert any(line.startswith("ERROR") and "could not start its run" in line for line in logged), (
        logged
    )


def test_zygote_death_is_repaired_transparently(sandbox: FencedSandbox) -> None:
    starts = sandbox.call("kill_zygote")
    calls = small_calls(2)
    result = sandbox.run(code=CORRECT_ATTENTION, entry_point="attention", calls=calls)
    assert_correct(result, calls)  # restarted (and self-checked) on the way, not INTERNAL
    assert sandbox.zygote_starts == starts + 1
    result = sandbox.run(code=CORRECT_ATTENTION, entry_point="attention", calls=calls)
    assert_correct(result, calls)
    assert sandbox.zygote_starts == starts + 1


def test_zygote_and_children_sit_in_the_slot_pids_cgroup(sandbox: FencedSandbox) -> None:
    group, procs, tree = sandbox.call("cgroup")
    assert group is not None and group.endswith(tuple(f"grader-sandbox-{n}" for n in range(256)))
    assert set(tree) <= set(procs)  # bubblewrap, its init, the zygote, the forked children
    assert len(tree) >= 4


def test_results_beyond_the_total_bound_are_bad_output(sandbox: FencedSandbox) -> None:
    # 15 MiB per call fits the per-array bound; six of them overflow the 64 MiB result area.
    code = "import numpy as np\ndef f(i):\n    return np.full(15 * 2**20 // 8, float(i))\n"
    calls = [Call(args=(i,)) for i in range(6)]
    result = sandbox.run(code=code, entry_point="f", calls=calls, limits=Limits(memory_mb=1024))
    assert result.status == RunStatus.BAD_OUTPUT
    assert result.message == M.MSG_BAD_OUTPUT
    assert [float(c.output[0]) for c in result.calls] == [0.0, 1.0, 2.0, 3.0]


def test_the_callers_work_between_start_and_wait_leaves_the_run_as_it_is(
    sandbox: FencedSandbox,
) -> None:
    # The grader computes the reference outputs there, while the child computes.
    code = "def f(x):\n    return x * 2\n"
    run = sandbox.call(
        "run_overlapped",
        run={
            "code": code,
            "entry_point": "f",
            "calls": [Call(args=(np.arange(3.0),)) for _ in range(4)],
            "limits": Limits(),
        },
        work_seconds=0.05,
    )
    assert run.status == RunStatus.OK
    assert [list(c.output) for c in run.calls] == [[0.0, 2.0, 4.0]] * 4


def test_a_caller_may_wait_for_the_first_results_only(sandbox: FencedSandbox) -> None:
    # 50 ms a call: the first result is read from the area long before the last call ends.
    code = "import time\ndef f(x):\n    time.sleep(0.05)\n    return x\n"
    seen, run = sandbox.call(
        "run_partial",
        run={
            "code": code,
            "entry_point": "f",
            "calls": [Call(args=(np.arange(3.0),)) for _ in range(4)],
            "limits": Limits(),
        },
    )
    assert 1 <= seen < 4
    assert run.status == RunStatus.OK and len(run.calls) == 4


# The code counts its calls in what it prints: a second phase never asked for never runs.
COUNTING = "n = 0\ndef f(x):\n    global n\n    n += 1\n    print('call', n)\n    return x * n\n"


def phases(sandbox: FencedSandbox, more: bool, code: str = COUNTING, **limits: Any):
    return sandbox.call(
        "run_phases",
        run={
            "code": code,
            "entry_point": "f",
            "calls": [Call(args=(np.arange(3.0),)) for _ in range(5)],
            "limits": Limits(**limits),
        },
        after=2,
        more=more,
    )


def test_a_run_with_no_second_phase_asked_ends_after_the_first(sandbox: FencedSandbox) -> None:
    first, last = phases(sandbox, False)
    assert last is None
    assert first.status == RunStatus.OK and first.message == ""
    assert [list(c.output) for c in first.calls] == [[0.0, 1.0, 2.0], [0.0, 2.0, 4.0]]
    assert first.stdout == "call 1\ncall 2\n"


def test_a_second_phase_runs_in_the_same_child(sandbox: FencedSandbox) -> None:
    # The module's global counter goes on from 2 to 5: one child, one module load.
    first, last = phases(sandbox, True)
    assert len(first.calls) == 2
    assert last.status == RunStatus.OK
    assert [float(c.output[1]) for c in last.calls] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert last.stdout == "".join(f"call {i}\n" for i in range(1, 6))


def test_a_run_stopped_in_its_first_phase_ends_there(sandbox: FencedSandbox) -> None:
    code = COUNTING.replace("    return", "    while n == 2:\n        pass\n    return")
    first, last = phases(sandbox, True, code=code, cpu_seconds=1, wall_seconds=5)
    assert last is None
    assert first.status == RunStatus.CPU_LIMIT
    assert len(first.calls) == 1


def test_a_child_that_closes_its_request_pipe_ends_after_the_first_phase(
    sandbox: FencedSandbox,
) -> None:
    # The student's code meddling with the request descriptor harms only its own run.
    code = "import os\nos.close(4)\ndef f(x):\n    return x\n"
    first, last = phases(sandbox, True, code=code)
    assert first.status == RunStatus.OK and len(first.calls) == 2
    assert len(last.calls) == 2
    assert last.status == RunStatus.EXITED


def test_runs_back_to_back_count_as_busy_and_a_pause_ends_it(sandbox: FencedSandbox) -> None:
    # Busy: the children forked then skip their warm-up (CPU a saturated worker needs).
    busy = sandbox.call(
        "runs_busy",
        run={
            "code": "def f(x):\n    return x\n",
            "entry_point": "f",
            "calls": [Call(args=(np.arange(3.0),))],
            "limits": Limits(),
        },
        # The first run may follow the executor's own self-check at once: not counted.
        pauses=[0.0, 0.3, 0.0, 0.0, 0.3],
    )
    assert busy[1:] == [False, True, True, False]
