"""The exercise kinds, registered in one place. No Django imports.

One module per kind (``attention``, ``multi_head``, ``softmax``, ``softmax_backward``,
``attention_backward``, ``demonstration``), each
ending with its ``KIND`` (a ``base.Kind``). Adding a kind is one module plus its content,
registered in ``KINDS`` below; grader/README.md says how.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from grader.engine.kinds import (
    attention,
    attention_backward,
    demonstration,
    multi_head,
    softmax,
    softmax_backward,
)
from grader.engine.kinds.base import Kind, WrongImplementation

# In this order everywhere a list of kinds is shown (the catalogue, the golden suite).
KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        attention.KIND,
        multi_head.KIND,
        softmax.KIND,
        softmax_backward.KIND,
        attention_backward.KIND,
        demonstration.KIND,
    )
}
KIND_NAMES: tuple[str, ...] = tuple(KINDS)


class UnknownKind(ValueError):
    pass


def kind_get(name: str) -> Kind:
    try:
        return KINDS[name]
    except KeyError:
        raise UnknownKind(f"unknown exercise kind {name!r}") from None


def reference_evaluate(
    kind: str, args: Sequence[Any], kwargs: Mapping[str, Any] | None = None
) -> np.ndarray:
    """The reference output for one call of an exercise of ``kind`` (ValueError if unknown)."""
    return kind_get(kind).reference(*args, **dict(kwargs or {}))


def wrong_implementations_all() -> tuple[WrongImplementation, ...]:
    """Every kind's known wrong implementations, kind by kind."""
    return tuple(impl for kind in KINDS.values() for impl in kind.wrong_implementations)


REFERENCE_SOURCES: dict[str, str] = {name: kind.reference_source for name, kind in KINDS.items()}

__all__ = [
    "KINDS",
    "KIND_NAMES",
    "REFERENCE_SOURCES",
    "Kind",
    "UnknownKind",
    "WrongImplementation",
    "kind_get",
    "reference_evaluate",
    "wrong_implementations_all",
]
