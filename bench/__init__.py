"""The benchmarks: each module runs from the project's root as ``python -m bench.<module>``.

Every benchmark prints its figures beside a baseline measured in the same run, and the load
average at its start and end. ``make bench`` runs sandbox, children, judging, worker, corpus,
publish, submit (with --instructions), pipeline and pages; celery_dispatch, fair_share, faults
and fork_cow are experiments the README cites, each with a target of its own (``make
bench-fair-share`` ...); meaning_contrast and meaning_encoder are experiments docs/judging.md
cites, run as modules only. ``common`` holds what they share; ``correct_attention.py`` is
the correct submission they grade, read as text. Never part of ``make test``.
"""
