"""The question bank: questions, follow-ups, wrong answers, key points, example answers,
attempts, pages."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.urls import reverse

from questions import assessment, content_files

# Where the admin explains the line kinds of a patterns field (the help block's id).
PATTERNS_HELP = (
    "Optional: leave empty to assess by meaning (the label and the example answers). One "
    "line each: a regular expression, `~ words` (a concept), `! regex` "
    "(wrong answers: a refuting cue) or `@name` (a shared set). See “How patterns are "
    "read” above."
)


class Level(models.TextChoices):
    L1 = "L1", "L1 · screen"
    L2 = "L2", "L2 · working"
    L3 = "L3", "L3 · senior"


class Status(models.TextChoices):
    DRAFT = "draft", "Draft"
    PUBLISHED = "published", "Published"


class CheckKind(models.TextChoices):
    NUMBER = "number", "Number (with tolerance)"
    SHAPE = "shape", "Shape, e.g. (n, n)"
    CHOICE = "choice", "Choice"
    TEXT = "text", "Free text with key points"


def _pattern_lines(raw: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in raw.splitlines() if line.strip())


def _validate_patterns(raw: str) -> None:
    """Every line compiles and is safe, and no `@name` is left: the forms and the content
    loader expand the sets they know (content_files.patterns_expand); a set line stored as it
    is would be a literal pattern that never matches."""
    try:
        content_files.patterns_expand(raw, sets={})
    except content_files.PatternError as exc:
        raise ValidationError(str(exc)) from exc


KNOWN_WRONG_NOT_A_MAP = 'Write {"wrong answer": "why it is wrong", ...}, with text for each.'
KNOWN_WRONG_NOT_FOR_TEXT = "A free-text follow-up has key points, not known wrong answers."
KNOWN_WRONG_NOT_A_WRONG_CHOICE = "Each known wrong answer must be one of the other options."
KNOWN_WRONG_NOT_A_NUMBER = "Each known wrong answer of a number check must be a number."


class Role(models.Model):
    """A job family a question is asked for, e.g. Inference Engineering."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=80)
    ordering = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ("ordering", "name")

    def __str__(self) -> str:
        return self.name


class QuestionQuerySet(models.QuerySet["Question"]):
    def published(self) -> QuestionQuerySet:
        return self.filter(status=Status.PUBLISHED)


class Question(models.Model):
    slug = models.SlugField(unique=True, help_text="Stable: other tools link to it.")
    title = models.CharField(max_length=200)
    roles = models.ManyToManyField(Role, blank=True, related_name="questions")
    level = models.CharField(max_length=2, choices=Level.choices, default=Level.L2)
    prompt = models.TextField(help_text="Markdown with $math$. Shown before the attempt.")
    short_answer = models.TextField(help_text="Markdown. Revealed after the attempt.")
    full_answer = models.TextField(
        help_text="Markdown with $math$. Revealed after the attempt. A line "
        "[[explorable:worked_example]] embeds that interactive view."
    )
    exercise_slugs = models.JSONField(
        default=list,
        blank=True,
        help_text='Coding exercises that demonstrate the answer, e.g. ["stable-softmax"].',
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    ordering = models.PositiveIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    objects = QuestionQuerySet.as_manager()

    class Meta:
        ordering = ("ordering", "title")

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("questions:detail", kwargs={"slug": self.slug})

    @property
    def is_published(self) -> bool:
        return self.status == Status.PUBLISHED

    def key_point_specs(self) -> list[assessment.KeyPointSpec]:
        return [kp.as_spec() for kp in self.key_points.filter(follow_up__isnull=True)]

    def wrong_answer_specs(self) -> list[assessment.WrongAnswerSpec]:
        return [wa.as_spec() for wa in self.wrong_answers.all()]

    def example_specs(self) -> list[assessment.ExampleSpec]:
        """The labelled answers to the question itself: what a key point or wrong answer
        without patterns is read by meaning from."""
        return [e.as_spec() for e in self.example_answers.filter(follow_up__isnull=True)]


class FollowUp(models.Model):
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="follow_ups")
    ordering = models.PositiveIntegerField(default=0)
    level = models.CharField(max_length=2, choices=Level.choices, default=Level.L1)
    prompt = models.TextField(help_text="Markdown. Shown after the question's reveal.")
    expected_answer = models.TextField(help_text="Markdown. Revealed after the follow-up attempt.")
    check_kind = models.CharField(max_length=10, choices=CheckKind.choices, default=CheckKind.TEXT)
    expected_number = models.FloatField(null=True, blank=True)
    tolerance = models.FloatField(default=0.0)
    expected_shape = models.CharField(max_length=60, blank=True, help_text="e.g. (n, n)")
    choices = models.JSONField(default=list, blank=True, help_text="A list of option strings.")
    correct_choice = models.CharField(max_length=300, blank=True)
    known_wrong = models.JSONField(
        default=dict,
        # Rows written by older code (a migration's historical model) get an empty map too.
        db_default={},
        blank=True,
        help_text="Wrong answers you foresee, each with what it is and why it is wrong: "
        '{"512": "d_model, the model width; the question asks for one head\'s width."} for a '
        "number or a shape, the option's text for a choice. Shown when a candidate gives it.",
    )

    class Meta:
        ordering = ("ordering", "id")

    def __str__(self) -> str:
        return f"{self.get_level_display()}: {self.prompt[:60]}"

    def known_wrong_clean(self) -> dict[str, str]:
        """The errors of `known_wrong` by field, or nothing (see clean)."""
        value = self.known_wrong
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in value.items()
        ):
            return {"known_wrong": KNOWN_WRONG_NOT_A_MAP}
        if self.check_kind == CheckKind.TEXT and value:
            return {"known_wrong": KNOWN_WRONG_NOT_FOR_TEXT}
        if self.check_kind == CheckKind.CHOICE:
            strangers = [k for k in value if k not in (self.choices or [])]
            if strangers or self.correct_choice in value:
                return {"known_wrong": KNOWN_WRONG_NOT_A_WRONG_CHOICE}
        if self.check_kind == CheckKind.NUMBER and any(
            assessment.parse_number(k) is None for k in value
        ):
            return {"known_wrong": KNOWN_WRONG_NOT_A_NUMBER}
        return {}

    @property
    def anchor(self) -> str:
        return f"follow-up-{self.pk}"

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if self.check_kind == CheckKind.NUMBER and self.expected_number is None:
            errors["expected_number"] = "A number check needs the expected number."
        if self.check_kind == CheckKind.SHAPE and (
            assessment.normalise_shape(self.expected_shape) is None
        ):
            errors["expected_shape"] = "Write the expected shape like (n, n)."
        if self.check_kind == CheckKind.CHOICE:
            if not isinstance(self.choices, list) or len(self.choices) < 2:
                errors["choices"] = "A choice check needs a list of at least two options."
            elif self.correct_choice not in self.choices:
                errors["correct_choice"] = "The correct choice must be one of the options."
        errors.update(self.known_wrong_clean())
        if errors:
            raise ValidationError(errors)

    def key_point_specs(self) -> list[assessment.KeyPointSpec]:
        return [kp.as_spec() for kp in self.key_points.all()]


class WrongAnswer(models.Model):
    """A misconception interviewers hear, with the rebuttal shown after the attempt."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="wrong_answers")
    slug = models.SlugField(help_text="Stable: the grader links diagnoses to it.")
    statement = models.TextField()
    rebuttal = models.TextField(help_text="Markdown with $math$.")
    patterns = models.TextField(
        blank=True, validators=[_validate_patterns], help_text=PATTERNS_HELP
    )
    ordering = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ("ordering", "id")
        constraints = [
            models.UniqueConstraint(fields=("question", "slug"), name="wrong_answer_slug_unique")
        ]

    def __str__(self) -> str:
        return self.statement[:80]

    @property
    def anchor(self) -> str:
        return f"wrong-{self.slug}"

    def as_spec(self) -> assessment.WrongAnswerSpec:
        return assessment.WrongAnswerSpec(
            slug=self.slug, statement=self.statement, patterns=_pattern_lines(self.patterns)
        )


class KeyPoint(models.Model):
    """A point a good answer makes, recognised by patterns. Belongs to the question itself,
    or to one of its free-text follow-ups."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="key_points")
    follow_up = models.ForeignKey(
        FollowUp,
        on_delete=models.CASCADE,
        related_name="key_points",
        null=True,
        blank=True,
        help_text="Leave empty for a key point of the question itself.",
    )
    slug = models.SlugField()
    label = models.CharField(max_length=200)
    patterns = models.TextField(
        blank=True, validators=[_validate_patterns], help_text=PATTERNS_HELP
    )
    ordering = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ("ordering", "id")
        constraints = [
            models.UniqueConstraint(fields=("question", "slug"), name="key_point_slug_unique")
        ]

    def __str__(self) -> str:
        return self.label

    def clean(self) -> None:
        if self.follow_up_id and self.follow_up.question_id != self.question_id:
            raise ValidationError({"follow_up": "The follow-up must belong to the same question."})

    def as_spec(self) -> assessment.KeyPointSpec:
        return assessment.KeyPointSpec(
            slug=self.slug, label=self.label, patterns=_pattern_lines(self.patterns)
        )


class ExampleAnswer(models.Model):
    """A labelled answer instructors keep to test the assessor before candidates see it.

    Expected key points and wrong answer are slugs, not foreign keys: an example states what
    the answer says, and it must stay readable (and flag a mismatch) when a key point is
    renamed or removed.
    """

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="example_answers")
    follow_up = models.ForeignKey(
        FollowUp,
        on_delete=models.CASCADE,
        related_name="example_answers",
        null=True,
        blank=True,
        help_text="Leave empty for an answer to the question itself.",
    )
    text = models.TextField()
    expected_key_points = models.JSONField(
        default=list, blank=True, help_text="Slugs of the key points this answer makes."
    )
    expected_wrong_answer = models.SlugField(
        blank=True, help_text="Slug of the wrong answer it states; blank for none."
    )
    note = models.CharField(max_length=300, blank=True)
    ordering = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ("ordering", "id")

    def __str__(self) -> str:
        return self.text[:80]

    def as_spec(self) -> assessment.ExampleSpec:
        return assessment.ExampleSpec(
            text=self.text,
            key_points=tuple(self.expected_key_points or ()),
            wrong_answer=self.expected_wrong_answer,
        )

    def clean(self) -> None:
        if self.follow_up_id and self.follow_up.question_id != self.question_id:
            raise ValidationError({"follow_up": "The follow-up must belong to the same question."})
        if self.follow_up_id and self.expected_wrong_answer:
            raise ValidationError(
                {"expected_wrong_answer": "Follow-ups have no wrong answers: leave it blank."}
            )


class Attempt(models.Model):
    """One answer by a user, or by an anonymous candidate identified by a session token."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="question_attempts",
    )
    session_key = models.CharField(max_length=64, blank=True, db_index=True)
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="attempts")
    follow_up = models.ForeignKey(
        FollowUp, on_delete=models.CASCADE, null=True, blank=True, related_name="attempts"
    )
    text = models.TextField()
    assessment = models.JSONField(default=dict)
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ("-created", "-id")
        constraints = [
            models.CheckConstraint(
                condition=Q(user__isnull=False) | ~Q(session_key=""),
                name="attempt_has_owner",
            )
        ]

    def __str__(self) -> str:
        who = self.user or f"anonymous {self.session_key[:6]}"
        return f"{who} on {self.follow_up or self.question}"

    @property
    def is_follow_up(self) -> bool:
        return self.follow_up_id is not None


class Page(models.Model):
    """A long-form explainer page (Markdown with $math$ and explorable markers)."""

    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    lead = models.TextField(blank=True, help_text="Markdown: the summary under the title.")
    body = models.TextField(
        help_text="Markdown with $math$. A line [[explorable:NAME]] embeds an interactive view "
        "(variance, saturation, sqrt_vs_d, judges, worked_example)."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("title",)

    def __str__(self) -> str:
        return self.title
