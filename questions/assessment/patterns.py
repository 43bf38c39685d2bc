"""Instructors' patterns: refused when catastrophic, compiled once, and bounded in time on
every match, within the scope of one answer's assessment."""

from __future__ import annotations

import contextvars
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache, wraps
from re import _parser as sre_parser  # the standard library's own parse of a pattern
from typing import Any, TypeVar

import regex

# The assessment's one logger, whichever of its modules logs.
log = logging.getLogger("questions.assessment")


PATTERN_CATASTROPHIC = (
    "{pattern!r} repeats a group that itself repeats, such as (a+)+ or (\\w*)*: on some "
    "answers that takes exponential time. Repeat the inner part only, e.g. a+ or (?:\\w+ )+."
)
# Matching one pattern against one sentence stops after this long: that pattern is then left
# out of the rest of the answer's assessment (and logged), so a pattern that slipped past the
# check below costs a request at most this much, not seconds per character. Instructors'
# patterns take microseconds on real answers, so the bound never changes a real verdict.
PATTERN_TIMEOUT_SECONDS = 0.1

_Result = TypeVar("_Result")
# The patterns that ran out of time in the assessment under way (None outside one).
_timed_out: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar(
    "assessment_timed_out", default=None
)


@contextmanager
def _one_answer() -> Iterator[None]:
    """Scope of one answer's assessment: a pattern that ran out of time is skipped until it
    ends. Nested calls (assess_text calls find_unnegated) share the outer one's."""
    if _timed_out.get() is not None:
        yield
        return
    token = _timed_out.set(set())
    try:
        yield
    finally:
        _timed_out.reset(token)


def _per_answer(function: Callable[..., _Result]) -> Callable[..., _Result]:
    @wraps(function)
    def wrapped(*args: Any, **kwargs: Any) -> _Result:
        with _one_answer():
            return function(*args, **kwargs)

    return wrapped


_REPEATS = (sre_parser.MAX_REPEAT, sre_parser.MIN_REPEAT)


def _repeats_within(items: Any) -> Iterator[tuple[int, Any]]:
    """(min, body) of each repeat in items, through groups and alternatives but not into the
    repeats it yields (their own bodies are checked as outer repeats in turn)."""
    for op, arg in items:
        if op in _REPEATS:
            yield arg[0], arg
        elif op == sre_parser.SUBPATTERN:
            yield from _repeats_within(arg[-1])
        elif op == sre_parser.BRANCH:
            for branch in arg[1]:
                yield from _repeats_within(branch)


def _nested_repeat(items: Any) -> bool:
    for op, arg in items:
        if op in _REPEATS:
            _, high, body = arg
            if high == sre_parser.MAXREPEAT and _ambiguous_body(body):
                return True
            if _nested_repeat(body):
                return True
        elif op == sre_parser.SUBPATTERN:
            if _nested_repeat(arg[-1]):
                return True
        elif op == sre_parser.BRANCH:
            if any(_nested_repeat(branch) for branch in arg[1]):
                return True
        elif op in (sre_parser.ASSERT, sre_parser.ASSERT_NOT):
            if _nested_repeat(arg[1]):
                return True
        elif op == sre_parser.ATOMIC_GROUP:
            if _nested_repeat(arg):
                return True
    return False


def _ambiguous_body(body: Any) -> bool:
    """Whether an unbounded repeat's body holds an unbounded repeat with nothing else it must
    match: then a run of text splits into iterations in exponentially many ways ((a+)+,
    (x+y?)+). In (\\w+\\s+)* the required \\s+ fixes where each iteration ends."""
    body_min = body.getwidth()[0]
    for low, (_, high, inner) in _repeats_within(body):
        if high == sre_parser.MAXREPEAT and body_min - low * inner.getwidth()[0] <= 0:
            return True
    return False


def pattern_is_catastrophic(pattern: str) -> bool:
    """Whether the pattern repeats without bound a group whose only required part is itself an
    unbounded repeat, as in (a+)+, (\\w*)*, (?:x+y?)+: the shape whose failed matches
    backtrack exponentially. A bounded outer repeat ((?:\\w+ ){0,3}), a body with a required
    separator ((?:\\w+\\s+)*) and a pattern that does not parse (compiling it reports that)
    pass. Overlapping alternatives ((a|aa)+) are not caught here: the
    time bound on matching (PATTERN_TIMEOUT_SECONDS) covers whatever this misses.
    """
    try:
        parsed = sre_parser.parse(pattern.strip(), re.IGNORECASE)
    except (re.error, RecursionError, OverflowError):
        return False
    return _nested_repeat(parsed)


@lru_cache(maxsize=4096)
def _compile(pattern: str) -> regex.Pattern[str] | None:
    # The regex module for instructors' patterns: the same syntax and matches as re (VERSION0)
    # with a timeout, which re lacks. Our own fixed patterns stay on re.
    try:
        return regex.compile(pattern, regex.IGNORECASE | regex.VERSION0)
    except (regex.error, re.error):
        # A broken instructor pattern must not take the page down; the model's clean()
        # reports it when it is saved, so this only guards old rows.
        return None


def _pattern_finditer(pattern: str, compiled: regex.Pattern[str], text: str) -> list[Any]:
    """Every match of an instructor's pattern in text, or none if it ran out of time (it is
    then left out of this answer's assessment, and logged)."""
    skipped = _timed_out.get()
    if skipped is not None and pattern in skipped:
        return []
    try:
        # Most patterns miss most sentences: one search answers those, where building a
        # scanner for finditer cost several times more.
        if compiled.search(text, timeout=PATTERN_TIMEOUT_SECONDS) is None:
            return []
        return list(compiled.finditer(text, timeout=PATTERN_TIMEOUT_SECONDS))
    except TimeoutError:
        if skipped is not None:
            skipped.add(pattern)
        log.warning(
            "assessment pattern %r ran out of time (%.2f s) on a %d-character sentence; "
            "assessed without it",
            pattern,
            PATTERN_TIMEOUT_SECONDS,
            len(text),
        )
        return []
