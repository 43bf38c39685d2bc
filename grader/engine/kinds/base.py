"""What an exercise kind is: the contract each module of ``grader.engine.kinds`` fills in.

No Django imports. A kind is one function students write (attention, multi-head attention,
softmax). Its module owns everything that differs from one kind to another: the reference,
the known wrong implementations, the diagnostic inputs, the visible examples, the custom-input
parser and the pictures' inputs. The generic machinery (``diagnosis``, ``trials``, ``plots``,
``validation``) asks the registry for a ``Kind`` and never branches on a kind's name; a kind is
built only on what sits below the registry (``reference``, ``inputs``, ``trial_args``,
``pictures``).
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from grader.engine.executors.base import Call, CallResult
from grader.engine.trial_args import ArgSpec, TrialCase

# Probe tags of the diagnostic inputs: which inputs a wrong implementation is compared on.
# "plain": unmasked, unit-variance inputs at several sizes; "mask": a random mask; "large":
# scores of magnitude ~1e3.
PLAIN = "plain"
MASK = "mask"
LARGE = "large"
# "batch": the inputs with leading batch axes (and the transpose probe, where `K.T` happens to
# run): what code right for 2-D input only does differently. Implementations tagged with it are
# compared on those inputs only.
BATCH = "batch"
# Tag of the attention probes called with V = identity (their outputs are the weights).
WEIGHTS = "weights"

# The size of each leading batch axis added to the 2-D diagnostic inputs. Element 0 of every
# batch is the 2-D input itself; the other element has its rows reversed (a different input).
BATCH_SIZE = 2
BATCH_FORMS = (1, 2)  # one leading batch axis (3-D inputs), then two (4-D)


@dataclass(frozen=True)
class WrongImplementation:
    """A known wrong implementation of an exercise kind, typical of one misconception.

    ``variant``, where set, is the (keyword, option) of the kind's parameterised wrong
    implementation (``Kind.variant``) that makes the same single mistake: the diagnosis's
    search for two mistakes at once combines these options, so this catalogue is its only list.
    """

    code: str
    kind: str
    func: Callable[..., Any]
    # The diagnostic inputs it is compared on (see the tags above).
    tags: frozenset[str] = field(default_factory=lambda: frozenset({PLAIN}))
    variant: tuple[str, str] | None = None

    @property
    def name(self) -> str:
        return self.func.__name__

    def source(self, entry_point: str) -> str:
        """The function as a student's module, defining ``entry_point``."""
        body = textwrap.dedent(inspect.getsource(self.func))
        body = body.replace(f"def {self.func.__name__}(", f"def {entry_point}(", 1)
        return f"import math\n\nimport numpy as np\n\n\n{body}"


def catalogue_of(kind: str) -> Callable[..., WrongImplementation]:
    """How a kind's module writes its catalogue: ``wrong(code, func, tags, variant)`` is one
    entry of that kind, compared on the plain inputs unless ``tags`` says otherwise."""

    def wrong(
        code: str,
        func: Callable[..., Any],
        tags: frozenset[str] = frozenset({PLAIN}),
        variant: tuple[str, str] | None = None,
    ) -> WrongImplementation:
        return WrongImplementation(code, kind, func, tags, variant)

    return wrong


@dataclass(frozen=True)
class DiagnosticProbe:
    call: Call
    tags: frozenset[str]
    # Leading batch axes added to a 2-D diagnostic input (0: the input as generated).
    form: int = 0
    # Index (in the probe list) of the 2-D input this one is a batched copy of.
    base: int | None = None
    # What our trusted functions return on this input, computed once: the fixed probes of a
    # worker (see diagnosis.fixed_probes) keep it from one grade to the next.
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)


def probe(call: Call, *tags: str) -> DiagnosticProbe:
    return DiagnosticProbe(call, frozenset(tags))


def stack_form(a: np.ndarray, form: int) -> np.ndarray:
    """``a`` with ``form`` leading batch axes of BATCH_SIZE; element (0, …, 0) is ``a``."""
    for _ in range(form):
        other = a[..., ::-1, :] if a.ndim >= 2 else a[::-1]
        a = np.stack([a, other] + [a] * (BATCH_SIZE - 2))
    return np.ascontiguousarray(a)


def batched(probes: Sequence[DiagnosticProbe], n_batched: int) -> list[DiagnosticProbe]:
    """Each 2-D probe again with one and with two leading batch axes on its first
    ``n_batched`` arguments (the others, a mask or weight matrices, broadcast as they are)."""
    out = []
    for form in BATCH_FORMS:
        for index, p in enumerate(probes):
            args = list(p.call.args)
            for i in range(n_batched):
                args[i] = stack_form(args[i], form)
            call = Call(args=tuple(args), return_inputs=p.call.return_inputs)
            out.append(DiagnosticProbe(call, p.tags, form=form, base=index))
    return out


# (q, k, weights) of each attention in a WEIGHTS probe's output, or None for a wrong shape.
WeightTriples = list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None


@dataclass(frozen=True)
class Kind:
    """One exercise kind, as the generic machinery sees it."""

    name: str
    # Trusted, float64: the checks, the diagnosis and the trials compare with it.
    reference: Callable[..., np.ndarray]
    # The same as students would write it: the seeded Exercise.reference_solution.
    reference_source: str
    wrong_implementations: tuple[WrongImplementation, ...]
    # Inputs that tell the known misconceptions apart (diagnosis.fixed_probes seeds them).
    diagnostic_probes: Callable[[np.random.Generator], list[DiagnosticProbe]]
    # True: every diagnostic input also comes with leading batch axes (``batched``), and the
    # batch codes compare the copies. False: the plain inputs have several numbers of
    # dimensions, and only an exception's text can name a batch code.
    batch_copies: bool
    # The entry point's parameters in order (the no-mutation check names a changed argument).
    parameters: tuple[str, ...]
    # The common checks' inputs (``checks.common``), each with what the check's message calls
    # it: large scores of about ``size`` in ``dtype`` (stability), and inputs to be returned
    # unchanged (no-mutation).
    stability_call: Callable[[np.random.Generator, float, type], tuple[Call, str]]
    no_mutation_call: Callable[[np.random.Generator], tuple[Call, str]]
    # Trials: the entry point's arguments, the public examples, and a custom input's parser.
    arguments: tuple[ArgSpec, ...]
    visible_examples: Callable[[], list[TrialCase]]
    trial_case: Callable[[Mapping[str, Any], np.random.Generator], TrialCase]
    # Pictures (``plots``): the calls to run the student's function on, the pictures' data from
    # its results, and the misconception codes a picture of this kind can show.
    plot_calls: Callable[[], tuple[Call, ...]]
    plots: Callable[[Sequence[CallResult]], dict[str, Any]]
    pictures: frozenset[str]
    # The check of the kind that compares values with the reference: whose hidden inputs an
    # instructor's custom check gets when it names none.
    values_check: str
    # The wrong implementation with every single mistake as a keyword option, so the diagnosis
    # can try two at once; None: no pairs are searched.
    variant: Callable[..., np.ndarray] | None = None
    # The attention weights inside a WEIGHTS probe's output: lets the diagnosis measure the
    # scale used (hardcoded-scale). None: the kind has no scale.
    weight_triples: Callable[[Call, np.ndarray], WeightTriples] | None = None
    # The softmax of a plain probe's input along every other axis: lets the diagnosis name
    # softmax-wrong-axis for any axis. None: the kind has no axis argument.
    other_axes: Callable[[DiagnosticProbe], list[Any]] | None = None
    # Inputs whose outputs must be non-negative and sum to 1 along an axis (weights-normalized),
    # and the message when they do not. None: the check does not judge this kind.
    normalized_calls: Callable[[np.random.Generator], list[tuple[Call, str, int]]] | None = None
    not_normalized: str = ""
    # Codes of the kind's own rules, from the 2-D diagnostic inputs, the reference's and the
    # student's outcomes on them (an array, RAISED or None) and the codes named so far: what
    # no fixed tolerance can match (a gradient floored at 1e-7 where the reference's is 1e-26).
    # None: the kind has no rules of its own.
    rules: (
        Callable[[Sequence[DiagnosticProbe], Sequence[Any], Sequence[Any], set[str]], set[str]]
        | None
    ) = None


def lost_only_where_saturated(
    probes: Sequence[DiagnosticProbe],
    refs: Sequence[Any],
    students: Sequence[Any],
    lost: Callable[[DiagnosticProbe, np.ndarray, np.ndarray], bool],
) -> bool:
    """A backward pass right on every plain input, finite and of the right shape on the
    saturated (large) ones, and ``lost(probe, student, ref)`` on at least one of those: the
    vanishing gradient clipped, floored or flushed away (``backward-vanishing-hidden``)."""
    plain_right = any_lost = False
    for item, ref, student in zip(probes, refs, students, strict=True):
        if not isinstance(student, np.ndarray) or not isinstance(ref, np.ndarray):
            if PLAIN in item.tags:
                return False
            continue
        if student.shape != ref.shape or not np.all(np.isfinite(student)):
            return False
        if PLAIN in item.tags:
            if not np.allclose(student, ref, rtol=1e-3, atol=1e-4):
                return False
            plain_right = True
        elif LARGE in item.tags:
            any_lost |= lost(item, student, ref)
    return plain_right and any_lost
