"""Score the assessor of the checkout this runs in on one batch of labelled answers.

    DATABASE_URL=sqlite:////tmp/w.sqlite3 DEBUG=true python manage.py migrate -v0
    DATABASE_URL=sqlite:////tmp/w.sqlite3 DEBUG=true python /path/to/scripts/assess_batch.py \\
        /path/to/questions/eval/why-divide-before-softmax.jsonl fresh4-

For measuring a past commit (a `git worktree` of it, cwd at its root) on answers labelled
later: it uses only what every commit has (`Question.key_point_specs`, `wrong_answer_specs`,
`assessment.assess_text`). On the current code, `manage.py assess_eval --id-prefix` is the
same measurement with per-key-point detail.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main() -> None:
    path, prefix = Path(sys.argv[1]), sys.argv[2]
    sys.path.insert(0, os.getcwd())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.settings")
    import django

    django.setup()
    from questions import assessment
    from questions.models import Question

    question = Question.objects.get(slug=path.stem)
    key_points, wrong_answers = question.key_point_specs(), question.wrong_answer_specs()
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["id"].startswith(prefix) and r["target"] == "question"]
    tp = fp = fn = right = false_rebuttals = 0
    for row in rows:
        result = assessment.assess_text(row["text"], key_points, wrong_answers)
        got, want = set(result.key_points), set(row["key_points"])
        tp, fp, fn = tp + len(got & want), fp + len(got - want), fn + len(want - got)
        right += result.wrong_answer == row["wrong_answer"]
        false_rebuttals += result.wrong_answer not in (None, row["wrong_answer"])
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0
    print(
        f"{prefix}: {len(rows)} answers  key-point F1 {f1:.2f}  "
        f"wrong-answer accuracy {right / len(rows):.2f}  false rebuttals {false_rebuttals}"
    )


if __name__ == "__main__":
    main()
