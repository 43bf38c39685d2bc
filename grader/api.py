"""REST API of exercises (their public contract) and submissions: create (queued at once),
read one's own, list one's own (paginated)."""

from __future__ import annotations

import copy
from typing import Any, ClassVar

from django.core.validators import RegexValidator
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import (
    exceptions,
    mixins,
    pagination,
    permissions,
    renderers,
    serializers,
    status,
    viewsets,
)
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.fields import LongTextField
from common.schema import TEXT_PATTERN
from grader.engine.limits import CODE_MAX_BYTES
from grader.models import Exercise, Submission
from grader.selectors.exercises import (
    exercise_get_submittable,
    exercise_limits,
    exercise_limits_text,
)
from grader.selectors.grades import GRADES_COLUMNS, grades_csv
from grader.selectors.submissions import (
    submission_checks_visible,
    submission_diagnosis,
    submission_diagnosis_labels,
    submission_error,
    submission_queue_estimate_seconds,
    submission_queue_position,
    submissions_of_user,
)
from grader.services.submitting import (
    MSG_CODE_EMPTY,
    MSG_SUBMIT_THROTTLED,
    SubmissionRejected,
    submission_create,
)

# The submission limit is the service's (one limit whatever the path); kept here for callers.
MSG_THROTTLED = MSG_SUBMIT_THROTTLED


class ExerciseLimitsSerializer(serializers.Serializer):
    """The limits a run of a submission gets, as the sandbox enforces them."""

    cpu_seconds = serializers.FloatField(help_text="CPU time of one run, in seconds.")
    wall_seconds = serializers.FloatField(help_text="Wall-clock time of one run, in seconds.")
    memory_mb = serializers.IntegerField(help_text="Memory the code may add, in MB.")
    text = serializers.CharField(help_text="The limits as the exercise page states them.")


class ExerciseSerializer(serializers.ModelSerializer):
    """What a student may know of an exercise: never the reference solution or the checks."""

    url = serializers.SerializerMethodField(help_text="This exercise in the API.")
    page_url = serializers.SerializerMethodField(help_text="The exercise page in a browser.")
    limits = serializers.SerializerMethodField(help_text="The limits of a run.")

    class Meta:
        model = Exercise
        fields = (
            "slug",
            "url",
            "page_url",
            "title",
            "kind",
            "entry_point",
            "statement",
            "starter_code",
            "limits",
            "deadline",
        )
        read_only_fields = fields

    def get_url(self, obj: Exercise) -> str:
        return reverse("exercise-api-detail", kwargs={"slug": obj.slug})

    def get_page_url(self, obj: Exercise) -> str:
        return obj.get_absolute_url()

    @extend_schema_field(ExerciseLimitsSerializer)
    def get_limits(self, obj: Exercise) -> dict[str, Any]:
        limits = exercise_limits(exercise=obj)
        return {
            "cpu_seconds": limits.cpu_seconds,
            "wall_seconds": limits.wall_seconds,
            "memory_mb": limits.memory_mb,
            "text": exercise_limits_text(exercise=obj),
        }


class ExerciseViewSet(viewsets.ReadOnlyModelViewSet):
    """Published exercises: the statement and starter code to write a submission against."""

    serializer_class = ExerciseSerializer
    permission_classes = (permissions.AllowAny,)
    lookup_field = "slug"
    queryset = Exercise.objects.filter(is_published=True).order_by("order", "slug")


class SubmissionPagination(pagination.PageNumberPagination):
    page_size = 50

    def paginate_queryset(self, queryset: Any, request: Request, view: Any = None) -> Any:
        # DRF reads a blank or malformed ?page= as page 1; the schema says a positive integer.
        raw = request.query_params.get(self.page_query_param)
        if raw is not None and not (raw.isascii() and raw.isdigit() and 0 < len(raw) < 19):
            raise exceptions.NotFound(self.invalid_page_message.format(page_number=raw, message=""))
        return super().paginate_queryset(queryset, request, view)


@extend_schema_field({"type": "string", "maxLength": CODE_MAX_BYTES, "pattern": TEXT_PATTERN})
class CodeField(LongTextField):
    """Python source; its schema says what the service accepts (not blank, no NUL)."""


class SubmissionCreateSerializer(serializers.Serializer):
    exercise = serializers.SlugField(help_text="Exercise slug, e.g. scaled-dot-product-attention.")
    code = CodeField(
        max_length=CODE_MAX_BYTES,
        trim_whitespace=False,
        # Not only whitespace (the service's MSG_CODE_EMPTY); also the schema's pattern.
        validators=[RegexValidator(r"\S", message=MSG_CODE_EMPTY)],
        help_text=f"Python source, at most {CODE_MAX_BYTES} bytes in UTF-8 (413 beyond).",
    )


class CheckSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()
    passed = serializers.BooleanField()
    weight = serializers.FloatField()
    message = serializers.CharField()


class ErrorFrameSerializer(serializers.Serializer):
    line = serializers.IntegerField()
    function = serializers.CharField(allow_blank=True)
    code = serializers.CharField(allow_blank=True)


class StudentErrorSerializer(serializers.Serializer):
    """What the student's code raised: their own frames only, innermost first."""

    type = serializers.CharField()
    message = serializers.CharField(allow_blank=True)
    line = serializers.IntegerField(
        allow_null=True, help_text="The line of the submitted code it was raised on."
    )
    frames = ErrorFrameSerializer(many=True)


class DiagnosisSerializer(serializers.Serializer):
    code = serializers.CharField()
    title = serializers.CharField()
    label = serializers.CharField(help_text="The misconception's name (the same as title).")
    explanation = serializers.CharField()
    rebuttal_url = serializers.CharField(allow_null=True)
    rebuttal = serializers.CharField(
        allow_null=True, help_text="The wrong answer's rebuttal itself, Markdown with $math$."
    )
    anchor = serializers.CharField()
    explanation_url = serializers.CharField(
        allow_null=True, help_text="The explanation's section on /misconceptions/."
    )


class SubmissionSerializer(serializers.ModelSerializer):
    exercise = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    url = serializers.SerializerMethodField(help_text="Poll this API URL for the verdict.")
    page_url = serializers.SerializerMethodField(help_text="The live result page in a browser.")
    checks = serializers.SerializerMethodField()
    diagnosis = serializers.SerializerMethodField()
    queue_position = serializers.SerializerMethodField(
        help_text="While queued: 1 if it is graded next, 2 after that...; null once it runs."
    )
    queue_estimate_seconds = serializers.SerializerMethodField(
        help_text=(
            "While queued: about how many seconds until its grade starts (what is left of "
            "the grades running now plus the submissions ahead of it, at the median recent "
            "grade counting the running ones, shared by the busy workers); null once it runs "
            "or before any grade was measured. An estimate, not a promise."
        )
    )
    error = serializers.SerializerMethodField(
        help_text="Once final, what the code raised (syntax error, at load, on a check's "
        "input), or null."
    )
    diagnosis_labels = serializers.SerializerMethodField(
        help_text="The names of the misconceptions in `diagnosis`, in the same order."
    )

    class Meta:
        model = Submission
        fields = (
            "id",
            "url",
            "page_url",
            "exercise",
            "status",
            "queue_position",
            "queue_estimate_seconds",
            "score",
            "message",
            "checks",
            "diagnosis",
            "diagnosis_labels",
            "error",
            "stdout",
            "attempts",
            "received_at",
            "queued_at",
            "started_at",
            "finished_at",
        )
        read_only_fields = fields

    # DRF builds a ModelSerializer's fields from the model at every instantiation: most of what
    # serialising a submission costs, at every submit and every poll (bench/submit.py). They
    # depend on the class alone: built once, never bound, and each serializer binds copies.
    # Shallow copies: binding sets a copy's own name, parent and source, and these read-only
    # fields hold nothing else that changes (a deep copy re-ran every field's __init__).
    _built_fields: ClassVar[dict[str, serializers.Field] | None] = None

    def get_fields(self) -> dict[str, serializers.Field]:
        cls = type(self)
        if cls.__dict__.get("_built_fields") is None:
            cls._built_fields = super().get_fields()
        return {name: copy.copy(field) for name, field in cls._built_fields.items()}

    def get_url(self, obj: Submission) -> str:
        return reverse("submission-api-detail", kwargs={"pk": obj.pk})

    def get_page_url(self, obj: Submission) -> str:
        return reverse("submissions:detail", kwargs={"pk": obj.pk})

    # Each of these is read by two fields: computed once per submission (every poll of a
    # waiting student's page pays for them).
    def _once(self, obj: Submission, what: str, compute: Any) -> Any:
        memo = self.__dict__.setdefault("_memo", {})
        key = (obj.pk, what)
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    def get_queue_position(self, obj: Submission) -> int | None:
        return self._once(obj, "position", lambda: submission_queue_position(submission=obj))

    def get_queue_estimate_seconds(self, obj: Submission) -> float | None:
        position = self.get_queue_position(obj)
        return submission_queue_estimate_seconds(
            submission=obj, ahead=None if position is None else position - 1
        )

    def _checks(self, obj: Submission) -> list[dict[str, Any]]:
        viewer = self.context["request"].user
        return self._once(
            obj, "checks", lambda: submission_checks_visible(submission=obj, viewer=viewer)
        )

    @extend_schema_field(StudentErrorSerializer(allow_null=True))
    def get_error(self, obj: Submission) -> dict[str, Any] | None:
        error = submission_error(submission=obj, checks=self._checks(obj))
        return error.as_dict() if error is not None else None

    def get_diagnosis_labels(self, obj: Submission) -> list[str]:
        return submission_diagnosis_labels(submission=obj)

    @extend_schema(responses=CheckSerializer(many=True))
    def get_checks(self, obj: Submission) -> list[dict[str, Any]]:
        return self._checks(obj)

    @extend_schema(responses=DiagnosisSerializer(many=True))
    def get_diagnosis(self, obj: Submission) -> list[dict[str, Any]]:
        # Through the serializer, so the API carries its documented fields only (not the HTML).
        return DiagnosisSerializer(submission_diagnosis(submission=obj), many=True).data


class SubmissionViewSet(
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.ListModelMixin,
    viewsets.GenericViewSet,
):
    """Submit code for grading; poll the returned URL until ``status`` is final."""

    serializer_class = SubmissionSerializer
    # For the schema only (the id's type); requests go through get_queryset.
    queryset = Submission.objects.none()
    permission_classes = (permissions.IsAuthenticated,)
    pagination_class = SubmissionPagination
    # Creating counts against the submission limit in submission_create (shared with the
    # page's form); polling a verdict only against the general per-user rate.

    def get_queryset(self) -> Any:
        # Others' submissions don't exist for a student: 404, not 403.
        return submissions_of_user(user=self.request.user)

    # 400, 404 (no such published exercise), 413 and 429: common.schema documents them.
    @extend_schema(request=SubmissionCreateSerializer, responses={201: SubmissionSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        payload = SubmissionCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        exercise = exercise_get_submittable(slug=payload.validated_data["exercise"])
        try:
            submission = submission_create(
                user=request.user, exercise=exercise, code=payload.validated_data["code"]
            )
        except SubmissionRejected as rejected:
            headers = {"Retry-After": str(rejected.retry_after)} if rejected.retry_after else {}
            return Response(
                {"detail": rejected.message}, status=rejected.status_code, headers=headers
            )
        body = SubmissionSerializer(submission, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["url"]})


# --- Grades out -----------------------------------------------------------------------------

MSG_GRADES_FORBIDDEN = "Only staff who may view every submission can download the grades."


class CsvRenderer(renderers.BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> bytes:
        return str(data).encode(self.charset)


class CsvOrJsonErrors(BaseContentNegotiation):
    """CSV whatever the Accept header says (GradesCsvApi turns errors into JSON itself)."""

    def select_parser(self, request: Request, parsers: Any) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(self, request: Request, renderers: Any, format_suffix: Any = None) -> Any:
        return renderers[0], renderers[0].media_type


class CanViewEverySubmission(permissions.BasePermission):
    """The staff pages' rule: staff with grader.view_submission, not only is_staff."""

    message = MSG_GRADES_FORBIDDEN

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return bool(user.is_staff and user.has_perm("grader.view_submission"))


class GradesCsvApi(APIView):
    """Scores per student and exercise, as CSV (what the staff pages' download gives)."""

    permission_classes = (permissions.IsAuthenticated, CanViewEverySubmission)
    renderer_classes = (CsvRenderer, renderers.JSONRenderer)
    content_negotiation_class = CsvOrJsonErrors

    @extend_schema(
        operation_id="grades_csv",
        summary="Grades per student and exercise (CSV)",
        description=(
            "Staff with the view_submission permission only. One row per student and "
            f"exercise, columns {', '.join(GRADES_COLUMNS)}; scores are 0 to 1, best and "
            "latest over graded submissions (internal errors are not counted), submissions "
            "counts every one. A text cell starting with = + - @ is written with a leading "
            "apostrophe, so a spreadsheet does not run it as a formula."
        ),
        responses={
            (200, "text/csv"): OpenApiResponse(
                response=OpenApiTypes.STR, description="The CSV, header first."
            )
        },
    )
    def get(self, request: Request) -> Response:
        return Response(
            grades_csv(), headers={"Content-Disposition": 'attachment; filename="grades.csv"'}
        )

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        if response.status_code >= 400:  # every error is JSON, as the schema documents
            request.accepted_renderer = renderers.JSONRenderer()
            request.accepted_media_type = renderers.JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)
