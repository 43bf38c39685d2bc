"""Server time of the admin's Validate page, for a question with --examples example answers.

    .venv/bin/python -m bench.validate [--examples 100] [--runs 5] [--slug SLUG]

Builds a throwaway SQLite database with the seeded content and example answers (the test
settings, migrations run), keeps the first --examples examples of the question, and times
GET /admin/questions/question/<id>/validate/ in process (assessing every example, scoring,
rendering the first page), --runs times after one warm-up, each with the cache cleared first
(cold: the examples assessed) and then with the results of the previous load remembered
(warm: an instructor paging or coming back). The goal: under 2 s for 100 examples, cold.
Also prints the figures with every seeded example of the question kept, for scale.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

GOAL_SECONDS = 2.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--slug", default="why-divide-before-softmax")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse

    from questions.models import ExampleAnswer, Question
    from tests.factories import user_create

    setup_test_environment()
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        question = Question.objects.get(slug=args.slug)
        user = user_create(username="bench-admin", password="bench-pass-123", is_staff=True)
        user.is_superuser = True
        user.save()
        client = Client()
        client.force_login(user)
        url = reverse("admin:questions_question_validate", args=[question.pk])

        def timed(*, cold: bool) -> list[float]:
            client.get(url)  # warm-up: compiled patterns, templates
            times = []
            for _ in range(args.runs):
                if cold:
                    cache.clear()
                start = time.perf_counter()
                response = client.get(url)
                times.append(time.perf_counter() - start)
                assert response.status_code == 200, response.status_code
            return times

        seeded = question.example_answers.count()
        all_times, all_warm = timed(cold=True), timed(cold=False)
        keep = list(question.example_answers.order_by("pk").values_list("pk", flat=True))
        ExampleAnswer.objects.filter(pk__in=keep[args.examples :]).delete()
        kept = question.example_answers.count()
        times, warm = timed(cold=True), timed(cold=False)
        median = statistics.median(times)
        print(f"load average at end: {os.getloadavg()[0]:.2f}")
        for count, cold_times, warm_times in ((seeded, all_times, all_warm), (kept, times, warm)):
            print(
                f"{args.slug}: {count} examples: cold median "
                f"{statistics.median(cold_times):.3f} s, max {max(cold_times):.3f} s; "
                f"warm median {statistics.median(warm_times):.3f} s"
            )
        verdict = "met" if median < GOAL_SECONDS else "NOT met"
        print(f"goal (< {GOAL_SECONDS:g} s for {args.examples} examples): {verdict}")
    finally:
        connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)


if __name__ == "__main__":
    main()
