"""REST API: published questions, and the caller's own attempts.

Reading a question never includes an answer, an expected answer or a rebuttal unless the
caller has attempted it; the reveal is built from the same selector as the web page.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.fields import LongTextField
from common.parsers import BoundedJSONParser
from common.rendering import render_markdown
from common.schema import TEXT_PATTERN
from questions import selectors, services
from questions.models import Attempt, Level, Question
from questions.selectors import Owner, QuestionPage

QUESTION_NOT_FOUND = "No published question with this slug."
FOLLOW_UP_NOT_FOUND = "This question has no follow-up with this id."


class RoleSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField()


class FollowUpRevealSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    level = serializers.CharField()
    prompt_html = serializers.CharField()
    check_kind = serializers.CharField()
    choices = serializers.ListField(child=serializers.CharField())
    answered = serializers.BooleanField()
    expected_answer_html = serializers.CharField(
        allow_null=True, help_text="Null until the caller has answered this follow-up."
    )


class WrongAnswerRevealSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    statement_html = serializers.CharField()
    rebuttal_html = serializers.CharField()
    url = serializers.CharField()


class RevealSerializer(serializers.Serializer):
    short_answer_html = serializers.CharField()
    full_answer_html = serializers.CharField()
    follow_ups = FollowUpRevealSerializer(many=True)
    wrong_answers = WrongAnswerRevealSerializer(many=True)


class QuestionSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    title = serializers.CharField()
    level = serializers.ChoiceField(choices=Level.choices)
    roles = RoleSerializer(many=True)
    prompt_html = serializers.CharField()
    url = serializers.CharField()
    follow_up_count = serializers.IntegerField()
    answered = serializers.BooleanField()


class QuestionDetailSerializer(QuestionSerializer):
    reveal = RevealSerializer(
        allow_null=True, help_text="Null until the caller has attempted the question."
    )


@extend_schema_field(
    {
        "type": "string",
        "minLength": 1,
        "maxLength": services.ANSWER_MAX_CHARS,
        "pattern": TEXT_PATTERN,
    }
)
class AnswerTextField(LongTextField):
    """The answer text; its schema says what answer_text_clean accepts."""


class AttemptCreateSerializer(serializers.Serializer):
    """The shape of an answer. Which question and follow-up it names is the view's lookup:
    an unknown one is a 404, an answer to a follow-up before its question a 409."""

    question = serializers.SlugField(help_text="Slug of a published question.")
    follow_up = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=2**63 - 1,
        help_text="Id of one of its follow-ups.",
    )
    text = AnswerTextField(
        trim_whitespace=True,
        help_text=f"At most {services.ANSWER_MAX_CHARS} characters (a CRLF line break counts "
        "as one); a longer answer is refused, never cut.",
        error_messages={"blank": services.ANSWER_EMPTY, "required": services.ANSWER_EMPTY},
    )

    def validate_text(self, value: str) -> str:
        # The form's rule, from the same function: the API and the page refuse the same texts.
        try:
            return services.answer_text_clean(value)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.messages[0]) from exc


class AttemptSerializer(serializers.ModelSerializer):
    question = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    follow_up = serializers.PrimaryKeyRelatedField(
        read_only=True, allow_null=True, help_text="Null for an answer to the question itself."
    )

    class Meta:
        model = Attempt
        fields = ("id", "question", "follow_up", "text", "assessment", "created")
        read_only_fields = fields


class AttemptCreatedSerializer(AttemptSerializer):
    reveal = RevealSerializer(help_text="The model answer, unlocked by this attempt.")

    class Meta(AttemptSerializer.Meta):
        fields = (*AttemptSerializer.Meta.fields, "reveal")
        read_only_fields = fields


def _owner(request: Request) -> Owner:
    return Owner(user=request.user) if request.user.is_authenticated else Owner()


def _reveal(page: QuestionPage) -> dict[str, Any] | None:
    if not page.revealed:
        return None
    full = "".join(s.html for s in page.full_answer)
    return {
        "short_answer_html": page.short_answer_html,
        "full_answer_html": full,
        "follow_ups": [
            {
                "id": v.follow_up.pk,
                "level": v.follow_up.level,
                "prompt_html": v.prompt_html,
                "check_kind": v.follow_up.check_kind,
                "choices": list(v.follow_up.choices or []),
                "answered": v.attempt is not None,
                "expected_answer_html": v.expected_html or None,
            }
            for v in page.follow_ups
        ],
        "wrong_answers": [
            {
                "slug": w.slug,
                "statement_html": w.statement_html,
                "rebuttal_html": w.rebuttal_html,
                "url": selectors.wrong_answer_url(w.slug, question_slug=page.question.slug),
            }
            for w in page.wrong_answers
        ],
    }


def _question_data(question: Question, answered: set[int]) -> dict[str, Any]:
    return {
        "slug": question.slug,
        "title": question.title,
        "level": question.level,
        "roles": [{"slug": r.slug, "name": r.name} for r in question.roles.all()],
        "prompt_html": render_markdown(question.prompt),
        "url": question.get_absolute_url(),
        "follow_up_count": question.follow_ups.count(),
        "answered": question.pk in answered,
    }


class QuestionFilterSerializer(serializers.Serializer):
    """The list's query string: a bad value is a 400 (a NUL byte, an unknown level)."""

    role = serializers.SlugField(required=False, help_text="Role slug, e.g. inference-engineering")
    level = serializers.ChoiceField(choices=Level.choices, required=False)


class QuestionListApi(APIView):
    permission_classes = (permissions.AllowAny,)

    @extend_schema(parameters=[QuestionFilterSerializer], responses=QuestionSerializer(many=True))
    def get(self, request: Request) -> Response:
        # A plain dict: a QueryDict would make a blank ?role= count as absent.
        query = QuestionFilterSerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        questions = selectors.question_list(
            role=query.validated_data.get("role", ""), level=query.validated_data.get("level", "")
        )
        answered = selectors.answered_question_ids(_owner(request))
        data = [_question_data(q, answered) for q in questions]
        return Response(QuestionSerializer(data, many=True).data)


class QuestionDetailApi(APIView):
    permission_classes = (permissions.AllowAny,)

    @extend_schema(responses=QuestionDetailSerializer)
    def get(self, request: Request, slug: str) -> Response:
        question = selectors.question_get(slug=slug)
        owner = _owner(request)
        page = selectors.question_page(question=question, owner=owner)
        data = _question_data(question, {question.pk} if page.revealed else set())
        data["reveal"] = _reveal(page)
        return Response(QuestionDetailSerializer(data).data)


class AttemptListCreateApi(APIView):
    """Post an answer (it is assessed and stored), or list your own attempts."""

    permission_classes = (permissions.IsAuthenticated,)
    # JSON only: `follow_up` may be null, which a form encoding cannot say.
    parser_classes = (BoundedJSONParser,)

    @extend_schema(responses=AttemptSerializer(many=True))
    def get(self, request: Request) -> Response:
        attempts = selectors.attempts_for(_owner(request))[:200]
        return Response(AttemptSerializer(attempts, many=True).data)

    @extend_schema(
        request=AttemptCreateSerializer,
        responses={
            201: AttemptCreatedSerializer,
            409: OpenApiResponse(
                description="A follow-up answered before its question (body: field errors)."
            ),
        },
    )
    def post(self, request: Request) -> Response:
        incoming = AttemptCreateSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        try:
            question = selectors.question_get(slug=incoming.validated_data["question"])
        except Http404:
            return Response({"question": [QUESTION_NOT_FOUND]}, status=status.HTTP_404_NOT_FOUND)
        follow_up = None
        follow_up_id = incoming.validated_data.get("follow_up")
        if follow_up_id is not None:
            follow_up = question.follow_ups.filter(pk=follow_up_id).first()
            if follow_up is None:
                return Response(
                    {"follow_up": [FOLLOW_UP_NOT_FOUND]}, status=status.HTTP_404_NOT_FOUND
                )
        try:
            attempt = services.attempt_create(
                question=question,
                follow_up=follow_up,
                text=incoming.validated_data["text"],
                user=request.user,
            )
        except services.AnswerThrottled as exc:
            return Response(
                {"detail": exc.message},
                status=status.HTTP_429_TOO_MANY_REQUESTS,
                headers={"Retry-After": str(exc.wait)},
            )
        except DjangoValidationError as exc:
            if exc.code == "follow_up_first":  # the request is fine; the order is not (yet)
                return Response({"follow_up": exc.messages}, status=status.HTTP_409_CONFLICT)
            return Response({"text": exc.messages}, status=status.HTTP_400_BAD_REQUEST)
        page = selectors.question_page(question=question, owner=_owner(request))
        data = AttemptSerializer(attempt).data
        data["reveal"] = _reveal(page)
        return Response(data, status=status.HTTP_201_CREATED)


class AttemptDetailApi(generics.RetrieveAPIView):
    permission_classes = (permissions.IsAuthenticated,)
    serializer_class = AttemptSerializer

    def get_object(self) -> Attempt:
        # Scoped to the caller: another user's attempt is a 404, not a 403, so ids leak nothing.
        return selectors.attempt_get(owner=_owner(self.request), pk=self.kwargs["pk"])
