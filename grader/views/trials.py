"""Run before Submit: the page's Run (htmx, polled like a verdict) and its API.

Thin: both paths call ``grader.services.trials.trial_run_create`` (one "runs" limit whatever
the path) and read a Run through ``grader.selectors.trials`` (its owner only).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.validators import RegexValidator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.parsers import BoundedJSONParser
from grader.api import CodeField
from grader.engine.limits import CODE_MAX_BYTES
from grader.engine.trial_args import MAX_DIM, MAX_ELEMENTS
from grader.engine.trials import (
    TrialInputError,
    arguments_of,
    trial_spec_from_fields,
)
from grader.forms import SubmitForm
from grader.models import Exercise, TrialRun
from grader.selectors.trials import trial_run_get_for_user, trial_run_is_stale
from grader.services.submitting import MSG_CODE_EMPTY
from grader.services.trials import TrialRejected, trial_run_create

POLL_INTERVAL = "500ms"
MSG_RUN_BAD_CODE = "Your code could not be read (it holds a character that is not allowed)."
MSG_RUN_STALE = "This run did not finish (the workers may be restarting). Run again."
# The page's custom-input fields: "run-<argument>" and "run-seed".
FIELD_PREFIX = "run-"


def _run_context(trial: TrialRun) -> dict[str, Any]:
    report = trial.result or {}
    matches = sum(bool(c.get("match")) for c in report.get("cases", []))
    return {
        "trial": trial,
        "report": report,
        "matches": matches,
        "all_match": bool(report.get("cases")) and matches == len(report["cases"]),
        "stale": trial_run_is_stale(trial=trial),
        "stale_message": MSG_RUN_STALE,
        "poll_interval": POLL_INTERVAL,
    }


@login_required
@require_POST
def run(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = get_object_or_404(Exercise, slug=slug, is_published=True)
    form = SubmitForm(request.POST)
    try:
        if not form.is_valid():
            raise TrialRejected(MSG_RUN_BAD_CODE)
        names = [a.name for a in arguments_of(exercise.kind)] + ["seed"]
        fields = {n: str(request.POST.get(FIELD_PREFIX + n, "")) for n in names}
        try:
            spec = trial_spec_from_fields(exercise.kind, fields)
        except TrialInputError as exc:
            raise TrialRejected(exc.message) from None
        trial = trial_run_create(
            user=request.user, exercise=exercise, code=form.cleaned_data["code"], input_spec=spec
        )
    except TrialRejected as rejected:
        if request.headers.get("HX-Request"):
            # 200: htmx swaps only 2xx by default, and the message is the content.
            return render(request, "grader/_run_result.html", {"rejected": rejected.message})
        messages.error(request, rejected.message)
        return redirect(exercise.get_absolute_url())
    if request.headers.get("HX-Request"):
        return render(request, "grader/_run_result.html", _run_context(trial))
    return redirect("grader:run-detail", pk=trial.pk)


def _own(request: HttpRequest, pk: int) -> TrialRun:
    trial = trial_run_get_for_user(user=request.user, trial_id=pk)
    if trial is None:
        raise Http404("No such run.")
    return trial


@login_required
@require_GET
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    trial = _own(request, pk)
    return render(request, "grader/run_detail.html", _run_context(trial))


@login_required
@require_GET
def run_status(request: HttpRequest, pk: int) -> HttpResponse:
    """The result fragment the page polls until the Run is done."""
    return render(request, "grader/_run_result.html", _run_context(_own(request, pk)))


# --- API -----------------------------------------------------------------------------------------

_ARRAY = {
    "oneOf": [
        {"type": "array", "description": "The values, a nested list (true/false for a mask)."},
        {
            "type": "object",
            "properties": {
                "shape": {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 1, "maximum": MAX_DIM},
                    "minItems": 1,
                    "maxItems": 4,
                }
            },
            "required": ["shape"],
            "additionalProperties": False,
            "description": "Random values from `seed`, rounded to two decimals.",
        },
        {"type": "string", "enum": ["causal"], "description": "For `mask` only."},
        {"type": "integer", "description": "For `n_heads` and `axis`."},
    ]
}


@extend_schema_field(
    {
        "type": "object",
        "nullable": True,
        "description": (
            "Optional input of your own, one entry per argument of the entry point (attention: "
            "Q, K, V, mask; multi-head: X, n_heads, W_q, W_k, W_v, W_o, mask; softmax: x, "
            f"axis) and `seed`. Every dimension at most {MAX_DIM}, at most {MAX_ELEMENTS} "
            'entries per array. Example: {"Q": {"shape": [3, 4]}, "K": {"shape": [5, 4]}, '
            '"V": [[1, 0], [0, 1], [1, 1], [0, 0], [2, 2]], "mask": "causal", "seed": 0}.'
        ),
        "properties": {"seed": {"type": "integer", "minimum": 0, "maximum": 2**31 - 1}},
        "additionalProperties": _ARRAY,
    }
)
class TrialInputField(serializers.JSONField):
    """The custom input; grader.engine.trials checks it against the exercise's arguments."""


class TrialRunCreateSerializer(serializers.Serializer):
    code = CodeField(
        max_length=CODE_MAX_BYTES,
        trim_whitespace=False,
        validators=[RegexValidator(r"\S", message=MSG_CODE_EMPTY)],
        help_text=f"Python source, at most {CODE_MAX_BYTES} bytes in UTF-8 (413 beyond).",
    )
    input = TrialInputField(required=False, allow_null=True, default=None)


class TrialArraySerializer(serializers.Serializer):
    shape = serializers.ListField(child=serializers.IntegerField())
    values = serializers.JSONField(
        allow_null=True,
        help_text="Nested list rounded to 4 decimals (NaN and infinities as strings); "
        "null when too large to show.",
    )


class TrialInputShapeSerializer(serializers.Serializer):
    name = serializers.CharField()
    shape = serializers.ListField(
        child=serializers.IntegerField(), allow_null=True, help_text="null for an integer."
    )


class TrialCaseSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="worked-example, masked, batched, ... or custom.")
    title = serializers.CharField()
    about = serializers.CharField()
    inputs = TrialInputShapeSerializer(many=True)
    expected = TrialArraySerializer(help_text="The trusted reference's output.")
    output = TrialArraySerializer(allow_null=True, help_text="Your function's output.")
    match = serializers.BooleanField()
    max_abs_diff = serializers.FloatField(allow_null=True)
    error = serializers.CharField(allow_null=True, help_text="Your traceback, or why no match.")


class TrialRunSerializer(serializers.ModelSerializer):
    exercise = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    url = serializers.SerializerMethodField(help_text="Poll this API URL until status is final.")
    outcome = serializers.SerializerMethodField(
        help_text="ok (each case has its outcome), error (the code could not run at all), "
        "internal (ours); null until done."
    )
    message = serializers.SerializerMethodField()
    stdout = serializers.SerializerMethodField()
    cases = serializers.SerializerMethodField()

    class Meta:
        model = TrialRun
        fields = (
            "id",
            "url",
            "exercise",
            "status",
            "outcome",
            "message",
            "stdout",
            "cases",
            "error",
            "created_at",
            "finished_at",
        )
        read_only_fields = fields

    def get_url(self, obj: TrialRun) -> str:
        return reverse("trial-run-api-detail", kwargs={"pk": obj.pk})

    def get_outcome(self, obj: TrialRun) -> str | None:
        return (obj.result or {}).get("status")

    def get_message(self, obj: TrialRun) -> str:
        return str((obj.result or {}).get("message", ""))

    def get_stdout(self, obj: TrialRun) -> str:
        return str((obj.result or {}).get("stdout", ""))

    @extend_schema(responses=TrialCaseSerializer(many=True))
    def get_cases(self, obj: TrialRun) -> list[dict[str, Any]]:
        return TrialCaseSerializer((obj.result or {}).get("cases", []), many=True).data


class TrialRunCreateApi(APIView):
    """Run your code on the exercise's visible examples (and your own input), never graded:
    202 with the Run to poll."""

    permission_classes = (permissions.IsAuthenticated,)
    # JSON only: the custom input is a structured object, which a form field cannot carry.
    parser_classes = (BoundedJSONParser,)

    # 400, 404 (no such published exercise), 413 and 429: common.schema documents them.
    @extend_schema(
        request=TrialRunCreateSerializer,
        responses={202: TrialRunSerializer},
        operation_id="exercises_run_create",
    )
    def post(self, request: Request, slug: str) -> Response:
        payload = TrialRunCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        exercise = get_object_or_404(Exercise, slug=slug, is_published=True)
        try:
            trial = trial_run_create(
                user=request.user,
                exercise=exercise,
                code=payload.validated_data["code"],
                input_spec=payload.validated_data.get("input"),
            )
        except TrialRejected as rejected:
            headers = {"Retry-After": str(rejected.retry_after)} if rejected.retry_after else {}
            return Response(
                {"detail": rejected.message}, status=rejected.status_code, headers=headers
            )
        body = TrialRunSerializer(trial).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class TrialRunDetailApi(APIView):
    """One of your Runs: its status, then each case's output beside the expected one."""

    permission_classes = (permissions.IsAuthenticated,)

    @extend_schema(responses={200: TrialRunSerializer}, operation_id="runs_retrieve")
    def get(self, request: Request, pk: int) -> Response:
        trial = trial_run_get_for_user(user=request.user, trial_id=pk)
        if trial is None:
            raise Http404("No such run.")
        return Response(TrialRunSerializer(trial).data)
