"""Pairs of students' code that look alike, by copydetect's winnowed fingerprints (the MOSS
approach): names and strings are abstracted away, so renaming variables does not hide a copy,
and whatever the exercise's starter code already contains is boilerplate and never counts.

Pure: code in, pairs out (no Django). The code is only read as text, never run. Nothing here
decides anything; the instructor reads the pairs side by side."""

from __future__ import annotations

import io
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

# Matches shorter than NOISE characters of tokenised code are ignored (copydetect's default).
# Every k-gram is kept (no winnowing window): copydetect hashes with Python's hash(), salted
# per process, so a winnowing window would pick other fingerprints in each web process and the
# same pair would read 79 % on one visit and 82 % on the next. Students' code is short enough.
NOISE_THRESHOLD = 25
GUARANTEE_THRESHOLD = NOISE_THRESHOLD
# A submission adding less than this to the starter code (in characters of tokenised code) has
# nothing of its student's own to compare: its few k-grams that straddle the starter's would
# make any two such submissions look like copies of each other.
MIN_OWN_TOKENS = 2 * NOISE_THRESHOLD
# Python source: the file name only tells pygments which lexer to use.
FILE_NAME = "submission.py"


@dataclass(frozen=True)
class Segment:
    text: str
    copied: bool


@dataclass(frozen=True)
class Pair:
    left: Hashable
    right: Hashable
    similarity_left: float  # the share of the left code's tokens found in the right
    similarity_right: float
    segments_left: tuple[Segment, ...]
    segments_right: tuple[Segment, ...]

    @property
    def similarity(self) -> float:
        return max(self.similarity_left, self.similarity_right)


def _fingerprint(code: str, boilerplate: np.ndarray | None = None) -> Any:
    # Imported here: copydetect imports matplotlib, which only this page needs.
    from copydetect import CodeFingerprint

    return CodeFingerprint(
        FILE_NAME,
        NOISE_THRESHOLD,
        GUARANTEE_THRESHOLD - NOISE_THRESHOLD + 1,
        boilerplate=boilerplate,
        fp=io.StringIO(code),
    )


def segments(code: str, slices: np.ndarray) -> tuple[Segment, ...]:
    """``code`` cut into copied and not copied runs, from copydetect's [starts, ends]."""
    out: list[Segment] = []
    position = 0
    if len(slices) == 2 and len(slices[0]):
        for start, end in sorted(zip(slices[0].tolist(), slices[1].tolist(), strict=True)):
            start, end = max(int(start), position), min(int(end), len(code))
            if start >= end:
                continue
            if start > position:
                out.append(Segment(code[position:start], copied=False))
            out.append(Segment(code[start:end], copied=True))
            position = end
    if position < len(code):
        out.append(Segment(code[position:], copied=False))
    return tuple(out)


def similar_pairs(
    *, codes: Mapping[Hashable, str], boilerplate: str = "", threshold: float = 0.8
) -> list[Pair]:
    """Every pair whose similarity (the larger of the two shares) reaches ``threshold``, the
    most similar first."""
    from copydetect import compare_files

    base = None
    if boilerplate.strip():
        base = np.unique(np.array(list(_fingerprint(boilerplate).hashes), dtype=np.int64))
    prints = {key: _fingerprint(code, base) for key, code in codes.items()}
    prints = {key: fp for key, fp in prints.items() if fp.token_coverage >= MIN_OWN_TOKENS}
    pairs = []
    for left, right in combinations(prints, 2):
        _, (share_left, share_right), (slices_left, slices_right) = compare_files(
            prints[left], prints[right]
        )
        if max(share_left, share_right) < threshold:
            continue
        pairs.append(
            Pair(
                left=left,
                right=right,
                similarity_left=float(share_left),
                similarity_right=float(share_right),
                segments_left=segments(codes[left], slices_left),
                segments_right=segments(codes[right], slices_right),
            )
        )
    pairs.sort(key=lambda p: -p.similarity)
    return pairs
