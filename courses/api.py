"""REST API of courses: the caller's courses, their assignments, the gradebook, extensions and
overrides. Per object: a course is a 404 to whoever is not in it; its staff (instructors and
teaching assistants) read every student's rows, a student only their own; only instructors
give extensions and overrides. Thin: selectors and services do the work; a refused write
(django ValidationError) is mapped to a 400 in ``_refused`` alone."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import exceptions, permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.schema import NO_NUL_PATTERN, TEXT_PATTERN
from courses import selectors, services
from courses.models import Assignment, Course, Extension, Membership, ScoreOverride

MSG_NOT_INSTRUCTOR = "Only an instructor of this course may do this."
MSG_UNKNOWN_STUDENT = "No student of this course has this username."
MSG_UNKNOWN_ASSIGNMENT = "This course has no such assignment."
# Row ids in paths: at most 18 digits, so no id reaches past 64 bits.
ID_PATTERN = "[0-9]{1,18}"


def _refused(error: ValidationError) -> Response:
    if hasattr(error, "error_dict"):
        return Response(error.message_dict, status=status.HTTP_400_BAD_REQUEST)
    return Response({"detail": " ".join(error.messages)}, status=status.HTTP_400_BAD_REQUEST)


def _course(request: Request, slug: str) -> Course:
    course = Course.objects.filter(slug=slug).first()
    if course is None or not selectors.courses_for(user=request.user).filter(pk=course.pk).exists():
        raise Http404
    return course


def _instructor(request: Request, course: Course) -> None:
    if not selectors.course_is_instructor(course=course, user=request.user):
        raise exceptions.PermissionDenied(MSG_NOT_INSTRUCTOR)


def _role(course: Course, user: Any) -> str | None:
    if user.is_superuser and not Membership.objects.filter(course=course, user=user).exists():
        return Membership.Role.INSTRUCTOR
    return (
        Membership.objects.filter(course=course, user=user).values_list("role", flat=True).first()
    )


class CourseSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    title = serializers.CharField()
    time_zone = serializers.CharField(help_text="IANA name: how times are shown, what a day is.")
    role = serializers.ChoiceField(
        choices=Membership.Role.choices, allow_null=True, help_text="Your role in it."
    )
    page_url = serializers.CharField()


class AssignmentSerializer(serializers.ModelSerializer):
    exercise = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    question = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    page_url = serializers.CharField(source="get_absolute_url", read_only=True)
    work_url = serializers.CharField(
        source="target_url", read_only=True, help_text="Submit or answer there."
    )

    class Meta:
        model = Assignment
        fields = (
            "id",
            "title",
            "exercise",
            "question",
            "opens_at",
            "due_at",
            "late_policy",
            "penalty_per_day",
            "penalty_cap",
            "hard_deadline",
            "page_url",
            "work_url",
        )
        read_only_fields = fields


class ScoreSerializer(serializers.Serializer):
    assignment = serializers.IntegerField()
    score = serializers.FloatField(allow_null=True, help_text="The score that counts, in [0, 1].")
    submission = serializers.IntegerField(allow_null=True, help_text="Where it came from.")
    attempt = serializers.IntegerField(allow_null=True)
    late_penalty = serializers.FloatField(help_text="The fraction the late policy took off.")
    days_late = serializers.IntegerField()
    overridden = serializers.BooleanField()
    override_comment = serializers.CharField(allow_blank=True)


class GradebookRowSerializer(serializers.Serializer):
    username = serializers.CharField()
    scores = ScoreSerializer(many=True)


class GradebookSerializer(serializers.Serializer):
    assignments = AssignmentSerializer(many=True)
    rows = GradebookRowSerializer(many=True)


class ExtensionSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.get_username", read_only=True)
    student_due_at = serializers.SerializerMethodField(
        help_text="The student's due time, the extension applied."
    )

    class Meta:
        model = Extension
        fields = (
            "id",
            "assignment",
            "username",
            "due_at",
            "extra_days",
            "student_due_at",
            "note",
            "created_at",
        )
        read_only_fields = fields

    def get_student_due_at(self, obj: Extension) -> Any:
        due = obj.assignment.policy_for(obj).due_at
        return serializers.DateTimeField().to_representation(due) if due else None


@extend_schema_field({"type": "string", "maxLength": 150, "pattern": TEXT_PATTERN})
class UsernameField(serializers.CharField):
    """A username as the API accepts it (not blank, no NUL)."""


@extend_schema_field({"type": "string", "maxLength": 2000, "pattern": TEXT_PATTERN})
class CommentField(serializers.CharField):
    pass


@extend_schema_field({"type": "string", "maxLength": 2000, "pattern": NO_NUL_PATTERN})
class NoteField(serializers.CharField):
    pass


class ExtensionCreateSerializer(serializers.Serializer):
    assignment = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    usernames = serializers.ListField(
        child=UsernameField(max_length=150), min_length=1, max_length=500
    )
    due_at = serializers.DateTimeField(required=False, allow_null=True)
    extra_days = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=365
    )
    note = NoteField(required=False, allow_blank=True, max_length=2000)


class OverrideSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.get_username", read_only=True)
    created_by = serializers.SerializerMethodField()

    class Meta:
        model = ScoreOverride
        fields = ("id", "assignment", "username", "score", "comment", "created_by", "created_at")
        read_only_fields = fields

    def get_created_by(self, obj: ScoreOverride) -> str:
        return obj.created_by.get_username() if obj.created_by else ""


class OverrideCreateSerializer(serializers.Serializer):
    assignment = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    username = UsernameField(max_length=150)
    score = serializers.FloatField(min_value=0.0, max_value=1.0)
    comment = CommentField(max_length=2000, help_text="Shown to the student with the score.")


def _assignment(course: Course, pk: int) -> Assignment:
    assignment = Assignment.objects.filter(course=course, pk=pk).select_related("course").first()
    if assignment is None:
        raise serializers.ValidationError({"assignment": [MSG_UNKNOWN_ASSIGNMENT]})
    return assignment


def _students(course: Course, usernames: list[str], *, field: str = "usernames") -> list[Any]:
    users = list(
        get_user_model().objects.filter(
            username__in=usernames,
            course_memberships__course=course,
            course_memberships__role=Membership.Role.STUDENT,
        )
    )
    if len(users) != len(set(usernames)):
        raise serializers.ValidationError({field: [MSG_UNKNOWN_STUDENT]})
    return users


def _visible(request: Request, course: Course, rows: Any) -> Any:
    """Staff see the course's rows; a student only their own."""
    if selectors.course_is_staff(course=course, user=request.user):
        return rows
    return rows.filter(user=request.user)


class CourseListApi(APIView):
    """The courses you belong to, with your role in each."""

    permission_classes = (permissions.IsAuthenticated,)

    @extend_schema(responses=CourseSerializer(many=True))
    def get(self, request: Request) -> Response:
        courses = selectors.courses_for(user=request.user).order_by("title", "id")
        return Response(
            CourseSerializer([_course_data(c, request) for c in courses], many=True).data
        )


def _course_data(course: Course, request: Request) -> dict[str, Any]:
    return {
        "slug": course.slug,
        "title": course.title,
        "time_zone": course.time_zone,
        "role": _role(course, request.user),
        "page_url": course.get_absolute_url(),
    }


class CourseDetailApi(APIView):
    permission_classes = (permissions.IsAuthenticated,)

    @extend_schema(responses=CourseSerializer)
    def get(self, request: Request, slug: str) -> Response:
        course = _course(request, slug)
        return Response(CourseSerializer(_course_data(course, request)).data)


class AssignmentListApi(APIView):
    """The course's assignments (a student sees the opened ones)."""

    permission_classes = (permissions.IsAuthenticated,)

    @extend_schema(responses=AssignmentSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        course = _course(request, slug)
        rows = selectors.assignments_of(course=course, user=request.user)
        return Response(AssignmentSerializer(rows, many=True).data)


class AssignmentDetailApi(APIView):
    permission_classes = (permissions.IsAuthenticated,)

    @extend_schema(responses=AssignmentSerializer)
    def get(self, request: Request, slug: str, pk: int) -> Response:
        course = _course(request, slug)
        row = get_object_or_404(selectors.assignments_of(course=course, user=request.user), pk=pk)
        return Response(AssignmentSerializer(row).data)


def _score_data(cell: selectors.GradebookCell) -> dict[str, Any]:
    c = cell.counting
    return {
        "assignment": cell.assignment.pk,
        "score": c.score if c else None,
        "submission": c.submission_id if c else None,
        "attempt": c.attempt_id if c else None,
        "late_penalty": c.late_penalty if c else 0.0,
        "days_late": c.days_late if c else 0,
        "overridden": c.overridden if c else False,
        "override_comment": c.override_comment if c else "",
    }


class GradebookApi(APIView):
    """The score that counts per student and assignment: every student for the course's staff,
    your own row for a student (opened assignments only)."""

    permission_classes = (permissions.IsAuthenticated,)

    @extend_schema(responses=GradebookSerializer)
    def get(self, request: Request, slug: str) -> Response:
        course = _course(request, slug)
        staff = selectors.course_is_staff(course=course, user=request.user)
        book = selectors.gradebook_for(course=course, only_user=None if staff else request.user)
        visible = {a.pk for a in selectors.assignments_of(course=course, user=request.user)}
        data = {
            "assignments": [a for a in book.assignments if a.pk in visible],
            "rows": [
                {
                    "username": row.user.get_username(),
                    "scores": [
                        _score_data(cell) for cell in row.cells if cell.assignment.pk in visible
                    ],
                }
                for row in book.rows
            ],
        }
        return Response(GradebookSerializer(data).data)


class ExtensionListApi(APIView):
    """Extensions of the course (a student sees their own); an instructor gives one to one or
    more students: a new due time or extra days."""

    permission_classes = (permissions.IsAuthenticated,)

    @extend_schema(responses=ExtensionSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        course = _course(request, slug)
        rows = Extension.objects.filter(assignment__course=course).select_related(
            "user", "assignment__course"
        )
        return Response(ExtensionSerializer(_visible(request, course, rows), many=True).data)

    @extend_schema(
        request=ExtensionCreateSerializer, responses={201: ExtensionSerializer(many=True)}
    )
    def post(self, request: Request, slug: str) -> Response:
        request.data  # noqa: B018 - parsed first: a malformed body is a 400 on every endpoint
        course = _course(request, slug)
        _instructor(request, course)
        payload = ExtensionCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        assignment = _assignment(course, data["assignment"])
        users = _students(course, data["usernames"])
        try:
            granted = services.extension_grant(
                assignment=assignment,
                users=users,
                due_at=data.get("due_at"),
                extra_days=data.get("extra_days"),
                note=data.get("note", ""),
                granted_by=request.user,
            )
        except ValidationError as error:
            return _refused(error)
        return Response(
            ExtensionSerializer(granted, many=True).data, status=status.HTTP_201_CREATED
        )


class ExtensionDetailApi(APIView):
    permission_classes = (permissions.IsAuthenticated,)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, slug: str, pk: int) -> Response:
        course = _course(request, slug)
        _instructor(request, course)
        extension = get_object_or_404(Extension, pk=pk, assignment__course=course)
        services.extension_revoke(extension=extension)
        return Response(status=status.HTTP_204_NO_CONTENT)


class OverrideListApi(APIView):
    """Score overrides of the course (a student sees their own, with the comment); an
    instructor sets one (it replaces an earlier one) with a comment the student reads."""

    permission_classes = (permissions.IsAuthenticated,)

    @extend_schema(responses=OverrideSerializer(many=True))
    def get(self, request: Request, slug: str) -> Response:
        course = _course(request, slug)
        rows = ScoreOverride.objects.filter(assignment__course=course).select_related(
            "user", "created_by"
        )
        return Response(OverrideSerializer(_visible(request, course, rows), many=True).data)

    @extend_schema(request=OverrideCreateSerializer, responses={201: OverrideSerializer})
    def post(self, request: Request, slug: str) -> Response:
        request.data  # noqa: B018 - parsed first: a malformed body is a 400 on every endpoint
        course = _course(request, slug)
        _instructor(request, course)
        payload = OverrideCreateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        assignment = _assignment(course, data["assignment"])
        (user,) = _students(course, [data["username"]], field="username")
        try:
            override = services.score_override_set(
                assignment=assignment,
                user=user,
                score=data["score"],
                comment=data["comment"],
                created_by=request.user,
            )
        except ValidationError as error:
            return _refused(error)
        return Response(OverrideSerializer(override).data, status=status.HTTP_201_CREATED)


class OverrideDetailApi(APIView):
    permission_classes = (permissions.IsAuthenticated,)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, slug: str, pk: int) -> Response:
        """Remove the override: the late policy's score counts again."""
        course = _course(request, slug)
        _instructor(request, course)
        override = get_object_or_404(ScoreOverride, pk=pk, assignment__course=course)
        services.score_override_remove(override=override)
        return Response(status=status.HTTP_204_NO_CONTENT)
