"""Run before Submit through the web and a worker: the page and the API create a TrialRun (never
a Submission), one "runs" limit covers both, only the owner reads it, and a real worker computes
it in the sandbox."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.services.api_tokens import api_token_issue
from grader.engine import reference, trial_args
from grader.engine import trials as engine
from grader.engine.executors.trusted import CallableExecutor
from grader.models import Exercise, Submission, TrialRun
from grader.services import trials as services
from grader.views.trials import MSG_RUN_STALE
from tests.factories import student_create
from tests.pipeline.stack import Worker, golden, wait_until

SLUG = "scaled-dot-product-attention"
CORRECT = golden("correct_matmul")
MISSING_SCALE = golden("missing_scale")
HX = {"HTTP_HX_REQUEST": "true"}


def login(username: str) -> Client:
    user = student_create(username=username, password=f"pw-{username}-123")
    c = Client()
    c.force_login(user)
    c.user = user  # type: ignore[attr-defined]
    return c


def api(username: str) -> Client:
    user = student_create(username=username, password=f"pw-{username}-123")
    c = Client(HTTP_AUTHORIZATION=f"Token {api_token_issue(user=user).token}")
    c.user = user  # type: ignore[attr-defined]
    return c


# --- The page and the API, without a worker ----------------------------------------------------


@pytest.mark.django_db
def test_the_statement_shows_the_visible_examples_and_students_get_run() -> None:
    anon = Client().get(f"/exercises/{SLUG}/").content.decode()
    assert 'data-example="worked-example"' in anon and 'data-example="masked"' in anon
    assert 'data-example="batched"' in anon and "0.8137" in anon  # the expected output
    assert 'id="run-button"' not in anon
    html = login("ann").get(f"/exercises/{SLUG}/").content.decode()
    assert 'id="run-button"' in html and 'id="run-result"' in html
    assert 'name="run-Q"' in html and 'form="submit-form"' in html


@pytest.mark.django_db
def test_a_run_from_the_page_is_a_queued_trial_not_a_submission() -> None:
    c = login("bea")
    r = c.post(
        f"/exercises/{SLUG}/run/",
        {"code": CORRECT, "run-Q": "3, 4", "run-K": "5, 4", "run-V": "5, 2", "run-seed": "3"},
        **HX,
    )
    assert r.status_code == 200
    trial = TrialRun.objects.get()
    assert trial.user == c.user and trial.status == TrialRun.Status.QUEUED  # type: ignore[attr-defined]
    assert trial.input_spec == {
        "Q": {"shape": [3, 4]},
        "K": {"shape": [5, 4]},
        "V": {"shape": [5, 2]},
        "seed": 3,
    }
    html = r.content.decode()
    assert f'hx-get="/runs/{trial.pk}/status/"' in html and "Waiting for a worker" in html
    assert Submission.objects.count() == 0
    # Without htmx, the form posts to the same view and lands on the Run's own page.
    plain = c.post(f"/exercises/{SLUG}/run/", {"code": CORRECT})
    assert plain.status_code == 302 and plain["Location"].startswith("/runs/")
    assert c.get(plain["Location"]).status_code == 200


@pytest.mark.django_db
def test_a_bad_custom_input_is_told_at_once_and_stores_nothing() -> None:
    c = login("cal")
    r = c.post(
        f"/exercises/{SLUG}/run/",
        {"code": CORRECT, "run-Q": "17, 4", "run-K": "2, 4", "run-V": "2, 2"},
        **HX,
    )
    assert trial_args.MSG_DIM_TOO_LARGE.format(name="Q", shape="(17, 4)") in r.content.decode()
    r = c.post(f"/exercises/{SLUG}/run/", {"code": CORRECT, "run-Q": "3, 4"}, **HX)
    assert engine.MSG_MISSING_ARGUMENT.format(name="K") in r.content.decode()
    r = c.post(f"/exercises/{SLUG}/run/", {"code": "  "}, **HX)
    assert services.MSG_RUN_CODE_EMPTY in r.content.decode()
    assert TrialRun.objects.count() == 0


@pytest.mark.django_db
def test_the_api_accepts_a_run_with_202_and_only_its_owner_reads_it() -> None:
    c = api("dan")
    body = {
        "code": CORRECT,
        "input": {"Q": [[1, 0]], "K": {"shape": [3, 2]}, "V": {"shape": [3, 2]}},
    }
    r = c.post(f"/api/exercises/{SLUG}/run/", body, content_type="application/json")
    assert r.status_code == 202, r.content
    data = r.json()
    assert data["status"] == "queued" and data["cases"] == [] and data["outcome"] is None
    assert r["Location"] == data["url"] == f"/api/runs/{data['id']}/"
    assert c.get(data["url"]).json()["id"] == data["id"]
    assert api("eve").get(data["url"]).status_code == 404
    assert Client().get(data["url"]).status_code == 401
    assert login("fay").get(f"/runs/{data['id']}/status/").status_code == 404
    assert c.get(f"/api/runs/{2**64}/").status_code == 404  # past 64 bits: no overflow
    bad = c.post(
        f"/api/exercises/{SLUG}/run/",
        {"code": CORRECT, "input": {"Q": [[1, 0]]}},
        content_type="application/json",
    )
    assert bad.status_code == 400
    assert bad.json() == {"detail": engine.MSG_MISSING_ARGUMENT.format(name="K")}
    missing = c.post(
        "/api/exercises/no-such/run/", {"code": CORRECT}, content_type="application/json"
    )
    assert missing.status_code == 404
    assert Submission.objects.count() == 0


@pytest.mark.usefixtures("rate_window")
@pytest.mark.django_db
def test_the_runs_limit_is_one_for_the_page_and_the_api(settings) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "runs": "2/min"}
    token = api("gus")
    page = Client()
    page.force_login(token.user)  # type: ignore[attr-defined]
    assert page.post(f"/exercises/{SLUG}/run/", {"code": CORRECT}, **HX).status_code == 200
    r = token.post(
        f"/api/exercises/{SLUG}/run/", {"code": CORRECT}, content_type="application/json"
    )
    assert r.status_code == 202
    # The third, whichever path: refused, with the same message and a Retry-After.
    r = token.post(
        f"/api/exercises/{SLUG}/run/", {"code": CORRECT}, content_type="application/json"
    )
    assert r.status_code == 429 and int(r["Retry-After"]) >= 1
    assert r.json()["detail"].startswith("Too many runs in a short time.")
    html = page.post(f"/exercises/{SLUG}/run/", {"code": CORRECT}, **HX).content.decode()
    assert "Too many runs in a short time." in html
    assert TrialRun.objects.count() == 2
    # Submissions have their own limit: Runs spent none of it.
    assert page.post(f"/exercises/{SLUG}/submit/", {"code": CORRECT}, **HX).status_code == 200
    assert Submission.objects.count() == 1


@pytest.mark.django_db
def test_runs_waiting_for_a_worker_are_capped_per_user() -> None:
    c = login("hal")
    for _ in range(services.MAX_WAITING_PER_USER):
        c.post(f"/exercises/{SLUG}/run/", {"code": CORRECT}, **HX)
    html = c.post(f"/exercises/{SLUG}/run/", {"code": CORRECT}, **HX).content.decode()
    assert services.MSG_RUN_TOO_MANY_WAITING.format(n=services.MAX_WAITING_PER_USER) in html


@pytest.mark.django_db
def test_a_run_no_worker_took_stops_polling(settings) -> None:
    from datetime import timedelta

    from django.utils import timezone

    c = login("ida")
    c.post(f"/exercises/{SLUG}/run/", {"code": CORRECT}, **HX)
    trial = TrialRun.objects.get()
    TrialRun.objects.filter(pk=trial.pk).update(created_at=timezone.now() - timedelta(hours=1))
    html = c.get(f"/runs/{trial.pk}/status/").content.decode()
    assert MSG_RUN_STALE in html and "hx-get" not in html


@pytest.mark.django_db
def test_the_worker_side_stores_each_case_beside_the_reference() -> None:
    c = login("jo")
    exercise = Exercise.objects.get(slug=SLUG)
    spec = {"Q": {"shape": [2, 3]}, "K": {"shape": [4, 3]}, "V": {"shape": [4, 2]}}
    trial = services.trial_run_create(
        user=c.user,  # type: ignore[attr-defined]
        exercise=exercise,
        code="(a trusted callable runs instead)",
        input_spec=spec,
    )
    done = services.trial_run_execute(
        trial_id=trial.pk, executor=CallableExecutor(reference.attention)
    )
    assert done is not None and done.status == TrialRun.Status.DONE
    assert [case["match"] for case in done.result["cases"]] == [True] * 4
    # Claimed once: a redelivered message computes nothing.
    assert services.trial_run_execute(trial_id=trial.pk, executor=CallableExecutor(max)) is None
    html = c.get(f"/runs/{trial.pk}/status/").content.decode()
    assert html.count("✓ matches") == 4 and "hx-get" not in html
    assert "4 of 4 match" in html


# --- A real worker and its sandbox ----------------------------------------------------------------


@pytest.mark.stack
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_worker_runs_the_examples_in_its_sandbox(worker: Worker, seed_content: None) -> None:
    c = api("kim")
    url = f"/api/exercises/{SLUG}/run/"
    body = {"code": CORRECT, "input": {"Q": {"shape": [2, 4]}, "K": [[1, 0, 0, 1]], "V": [[3, 4]]}}
    right = c.post(url, body, content_type="application/json").json()
    wrong = c.post(url, {**body, "code": MISSING_SCALE}, content_type="application/json").json()

    def final(run_id: int) -> dict | None:
        data = c.get(f"/api/runs/{run_id}/").json()
        return data if data["status"] in ("done", "failed") else None

    right = wait_until(lambda: final(right["id"]), timeout=90)
    wrong = wait_until(lambda: final(wrong["id"]), timeout=90)
    assert right["status"] == "done" and right["outcome"] == "ok", right  # type: ignore[index]
    names = [case["name"] for case in right["cases"]]  # type: ignore[index]
    assert names == ["worked-example", "masked", "batched", "custom"]
    assert all(case["match"] for case in right["cases"])  # type: ignore[index]
    worked = right["cases"][0]  # type: ignore[index]
    assert worked["output"]["values"] == worked["expected"]["values"]
    # One key: any scale gives V's row, so only the examples tell the missing scale apart.
    matches = [case["match"] for case in wrong["cases"]]  # type: ignore[index]
    assert matches == [False, False, False, True]
    assert Submission.objects.count() == 0
