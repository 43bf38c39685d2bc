"""REST API of submissions: create (queued at once), read one's own, list one's own."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, mixins, permissions, serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle

from grader.engine.limits import CODE_MAX_BYTES
from grader.models import Exercise, Submission
from grader.selectors.submissions import (
    submission_checks_visible,
    submission_diagnosis,
    submissions_of_user,
)
from grader.services.submissions import SubmissionRejected, submission_create

MSG_THROTTLED = "Too many submissions in a short time. Wait {wait} seconds and submit again."


class SubmissionCreateSerializer(serializers.Serializer):
    exercise = serializers.SlugField(help_text="Exercise slug, e.g. scaled-dot-product-attention.")
    code = serializers.CharField(
        max_length=CODE_MAX_BYTES, trim_whitespace=False, help_text="Python source."
    )


class CheckSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()
    passed = serializers.BooleanField()
    weight = serializers.FloatField()
    message = serializers.CharField()


class DiagnosisSerializer(serializers.Serializer):
    code = serializers.CharField()
    title = serializers.CharField()
    explanation = serializers.CharField()
    rebuttal_url = serializers.CharField(allow_null=True)
    anchor = serializers.CharField()
    explanation_url = serializers.CharField(allow_null=True)


class SubmissionSerializer(serializers.ModelSerializer):
    exercise = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    url = serializers.SerializerMethodField(help_text="Poll this API URL for the verdict.")
    page_url = serializers.SerializerMethodField(help_text="The live result page in a browser.")
    checks = serializers.SerializerMethodField()
    diagnosis = serializers.SerializerMethodField()

    class Meta:
        model = Submission
        fields = (
            "id",
            "url",
            "page_url",
            "exercise",
            "status",
            "score",
            "message",
            "checks",
            "diagnosis",
            "stdout",
            "attempts",
            "received_at",
            "queued_at",
            "started_at",
            "finished_at",
        )
        read_only_fields = fields

    def get_url(self, obj: Submission) -> str:
        return reverse("submission-api-detail", kwargs={"pk": obj.pk})

    def get_page_url(self, obj: Submission) -> str:
        return reverse("submissions:detail", kwargs={"pk": obj.pk})

    @extend_schema(responses=CheckSerializer(many=True))
    def get_checks(self, obj: Submission) -> list[dict[str, Any]]:
        return submission_checks_visible(submission=obj, viewer=self.context["request"].user)

    @extend_schema(responses=DiagnosisSerializer(many=True))
    def get_diagnosis(self, obj: Submission) -> list[dict[str, Any]]:
        return submission_diagnosis(submission=obj)


class SubmissionThrottle(ScopedRateThrottle):
    scope_attr = "throttle_scope"


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
    throttle_scope = "submissions"

    def get_throttles(self) -> list[Any]:
        # Creating has a tight scope of its own; polling a verdict only counts against the
        # general per-user rate, which a page polling every 0.7 s stays well under.
        return [SubmissionThrottle()] if self.action == "create" else super().get_throttles()

    def throttled(self, request: Request, wait: float | None) -> None:
        raise exceptions.Throttled(wait, detail=MSG_THROTTLED.format(wait=int(wait or 1)))

    def get_queryset(self) -> Any:
        # Others' submissions don't exist for a student: 404, not 403.
        return submissions_of_user(user=self.request.user)

    @extend_schema(request=SubmissionCreateSerializer, responses={201: SubmissionSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        payload = SubmissionCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        exercise = get_object_or_404(
            Exercise, slug=payload.validated_data["exercise"], is_published=True
        )
        try:
            submission = submission_create(
                user=request.user, exercise=exercise, code=payload.validated_data["code"]
            )
        except SubmissionRejected as rejected:
            return Response({"detail": rejected.message}, status=rejected.status_code)
        body = SubmissionSerializer(submission, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["url"]})
