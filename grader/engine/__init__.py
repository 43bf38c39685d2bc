"""The grading engine: pure Python and numpy, no Django (an import-linter contract keeps it so).

Executors compute a student function's outputs (the sandbox for student code); checks judge
them here in trusted code; the diagnosis names the misconception. The Django app around it
(`grader/`) stores submissions and calls `grading.grade`.
"""
