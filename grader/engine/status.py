"""The one status vocabulary of a grade: the engine's verdict, a run's outcome and the row's
final state are all one of these."""

import enum


class VerdictStatus(enum.StrEnum):
    PASSED = "passed"  # every check passed
    FAILED = "failed"  # the code ran and some check failed
    ERROR = "error"  # the student's code could not be evaluated
    INTERNAL_ERROR = "internal-error"  # ours: never charged, retried
