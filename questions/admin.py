"""Authoring: a question with its follow-ups, wrong answers, key points and example answers
on one page; Validate runs the assessor on the examples; the preview shows unsaved edits."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import ForeignKey, ManyToManyField, Model, QuerySet
from django.forms import ModelChoiceField
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from questions import selectors, services
from questions.admin_forms import (
    ExampleAnswerForm,
    JudgementForm,
    KeyPointForm,
    NamedRowsFormSet,
    QuestionForm,
    WrongAnswerForm,
    example_choices,
)
from questions.models import (
    Attempt,
    ExampleAnswer,
    FollowUp,
    KeyPoint,
    Page,
    Question,
    Role,
    Status,
    WrongAnswer,
)

MSG_VALIDATE_ONE = "Select exactly one question to validate."
MSG_DRAFT_INVALID = "The edit has errors, so it cannot be previewed. Fix them on the edit page."
# What of a previewed change form is not kept for "Back to editing" (a fresh page has its own).
DRAFT_NOT_KEPT = frozenset({"csrfmiddlewaretoken"})
# Where change_view leaves the previewed form's data for get_form and get_formset_kwargs.
DRAFT_FORM_ATTR = "_question_draft_form"
# Example answers inlined on a question's page (the newest); the rest are in their own list.
INLINE_EXAMPLES_SHOWN = 20
# Validate lists the examples a page at a time: the scores still cover all of them.
VALIDATE_PAGE_SIZE = 25
MSG_JUDGEMENT_INVALID = "The judgement was not kept: {errors}"

# The admin's own per-question fields a draft carries (everything a candidate sees).
DRAFT_QUESTION_FIELDS = (
    "title",
    "level",
    "status",
    "prompt",
    "short_answer",
    "full_answer",
    "exercise_slugs",
)
DRAFT_INLINE_FIELDS = {
    "follow_ups": (
        "ordering",
        "level",
        "prompt",
        "expected_answer",
        "check_kind",
        "expected_number",
        "tolerance",
        "expected_shape",
        "choices",
        "correct_choice",
        "known_wrong",
    ),
    "wrong_answers": ("slug", "statement", "rebuttal", "patterns", "ordering"),
    "key_points": ("slug", "label", "patterns", "ordering"),
}


class FollowUpInline(admin.StackedInline):
    model = FollowUp
    extra = 0
    fields = (
        ("ordering", "level", "check_kind"),
        "prompt",
        "expected_answer",
        ("expected_number", "tolerance"),
        "expected_shape",
        ("choices", "correct_choice"),
        "known_wrong",
    )


def _follow_ups_of_this_question(request: HttpRequest) -> QuerySet[FollowUp]:
    # The question being edited (or, on the preview-draft URL, previewed).
    object_id = request.resolver_match.kwargs.get("object_id")
    return FollowUp.objects.filter(question_id=object_id or 0)


class WrongAnswerInline(admin.StackedInline):
    model = WrongAnswer
    form = WrongAnswerForm
    extra = 0
    fields = (("slug", "ordering"), "statement", "rebuttal", "patterns")


class KeyPointInline(admin.TabularInline):
    model = KeyPoint
    form = KeyPointForm
    formset = NamedRowsFormSet
    extra = 0
    fields = ("slug", "label", "patterns", "follow_up", "ordering")

    def formfield_for_foreignkey(
        self, db_field: ForeignKey, request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField | None:
        # Only this question's follow-ups make sense here.
        if db_field.name == "follow_up":
            kwargs["queryset"] = _follow_ups_of_this_question(request)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class ExampleAnswerInline(admin.TabularInline):
    """The latest example answers, on the question's page; all of them in their own list.

    A question seeded from the evaluation set has hundreds of examples: inlined in full they
    would make the change form a few thousand fields (over DATA_UPLOAD_MAX_NUMBER_FIELDS) and
    a very long page. Only the latest are inlined; the formset edits exactly those and leaves
    the others alone.
    """

    model = ExampleAnswer
    form = ExampleAnswerForm
    formset = NamedRowsFormSet
    extra = 0
    verbose_name = "Example answer"
    verbose_name_plural = (
        f"Example answers (the latest {INLINE_EXAMPLES_SHOWN}; Validate runs the assessor on all)"
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[ExampleAnswer]:
        qs = super().get_queryset(request)
        object_id = request.resolver_match.kwargs.get("object_id")
        if not object_id:
            return qs
        latest = qs.filter(question_id=object_id).order_by("-id").values_list("pk", flat=True)
        return qs.filter(pk__in=list(latest[:INLINE_EXAMPLES_SHOWN]))

    def formfield_for_foreignkey(
        self, db_field: ForeignKey, request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField | None:
        if db_field.name == "follow_up":
            kwargs["queryset"] = _follow_ups_of_this_question(request)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@require_POST
def _judgement_post(request: HttpRequest, question: Question) -> HttpResponse:
    form = JudgementForm(request.POST, question=question)
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = ""
    back = back or reverse("admin:questions_question_validate", args=[question.pk])
    if not form.is_valid():
        errors = " ".join(str(e) for errs in form.errors.values() for e in errs)
        messages.error(request, MSG_JUDGEMENT_INVALID.format(errors=errors))
        return HttpResponseRedirect(back)
    data = form.cleaned_data
    try:
        services.example_answer_from_judgement(
            question=question,
            text=data["text"],
            key_points=data["expected_key_points"],
            wrong_answer=data["expected_wrong_answer"],
            follow_up=data["follow_up_row"],
            example=data["example_row"],
            note="Marked wrong on " + ("Validate" if data["example_row"] else "Try an answer"),
        )
    except ValidationError as exc:
        messages.error(request, MSG_JUDGEMENT_INVALID.format(errors=" ".join(exc.messages)))
        return HttpResponseRedirect(back)
    kept = services.JUDGEMENT_CORRECTED if data["example_row"] else services.JUDGEMENT_KEPT
    messages.success(request, kept)
    return HttpResponseRedirect(back)


def _draft_rows(formset: forms.BaseInlineFormSet, names: tuple[str, ...]) -> list[dict]:
    """The rows an inline formset would save, as plain data (the edit is validated, unsaved)."""
    rows = []
    for form in formset.forms:
        if formset._should_delete_form(form):
            continue
        if form.instance.pk is None and not form.has_changed():
            continue  # an untouched empty extra form
        row = {name: getattr(form.instance, name) for name in names}
        if isinstance(form.instance, FollowUp):
            row["id"] = form.instance.pk
        if isinstance(form.instance, KeyPoint):
            row["follow_up_id"] = form.instance.follow_up_id
        rows.append(row)
    return rows


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    form = QuestionForm
    list_display = ("title", "slug", "level", "status", "ordering", "preview_link")
    list_filter = ("status", "level", "roles")
    list_editable = ("ordering",)
    search_fields = ("title", "slug", "prompt")
    prepopulated_fields = {"slug": ("title",)}
    # Checkboxes, not the two-box filter widget: its script writes ARIA attributes that the
    # HTML spec forbids on its icons, and a question has a handful of roles to choose from.
    formfield_overrides = {ManyToManyField: {"widget": forms.CheckboxSelectMultiple}}
    readonly_fields = ("preview_link",)
    fieldsets = (
        (None, {"fields": ("title", "slug", "status", "preview_link")}),
        ("Who and how hard", {"fields": ("roles", "level", "ordering")}),
        ("Content", {"fields": ("prompt", "short_answer", "full_answer", "exercise_slugs")}),
    )
    inlines = (FollowUpInline, WrongAnswerInline, KeyPointInline, ExampleAnswerInline)
    actions = ("publish", "unpublish", "validate_action")
    change_form_template = "admin/questions/question/change_form.html"

    class Media:
        # After the admin's urlify.js: the slug typed from the title keeps √ as "sqrt".
        js = ("js/question_admin.js",)

    def get_changelist_form(self, request: HttpRequest, **kwargs: Any) -> Any:
        form = super().get_changelist_form(request, **kwargs)

        class NamedRowForm(form):  # type: ignore[valid-type,misc]
            # The list's editable cells have no label: name each after its question.
            def __init__(self, *args: Any, **form_kwargs: Any) -> None:
                super().__init__(*args, **form_kwargs)
                title = getattr(self.instance, "title", "")
                for name, field in self.fields.items():
                    label = field.label or name
                    field.widget.attrs["aria-label"] = f"{label} of {title}" if title else label

        return NamedRowForm

    def get_urls(self) -> list:
        urls = [
            path(
                "<int:object_id>/validate/",
                self.admin_site.admin_view(self.validate_view),
                name="questions_question_validate",
            ),
            path(
                "<int:object_id>/judgement/",
                self.admin_site.admin_view(self.judgement_view),
                name="questions_question_judgement",
            ),
            path(
                # object_id, as the change view names it: the inlines read it to offer only
                # this question's follow-ups, and the draft is validated by those inlines.
                "<int:object_id>/preview-draft/",
                self.admin_site.admin_view(self.preview_draft_view),
                name="questions_question_preview_draft",
            ),
        ]
        return urls + super().get_urls()

    def get_formset_kwargs(
        self, request: HttpRequest, obj: Model | None, inline: Any, prefix: str
    ) -> dict[str, Any]:
        kwargs = super().get_formset_kwargs(request, obj, inline, prefix)
        if isinstance(inline, ExampleAnswerInline):
            kwargs["form_kwargs"] = {"question": obj}
        draft = getattr(request, DRAFT_FORM_ATTR, None)
        if draft is not None:  # back from a preview: the rows as they were posted
            kwargs.update(data=draft, files=None)
        return kwargs

    def get_form(
        self, request: HttpRequest, obj: Model | None = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        draft = getattr(request, DRAFT_FORM_ATTR, None)
        if draft is None:
            return form

        class DraftForm(form):  # type: ignore[valid-type,misc]
            # The GET change view builds the form from the instance alone; bound to the
            # posted edit instead, it shows what the instructor had typed. Nothing is saved:
            # the request is still a GET.
            def __init__(self, *args: Any, **form_kwargs: Any) -> None:
                form_kwargs.setdefault("data", draft)
                super().__init__(*args, **form_kwargs)

        return DraftForm

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        """With ``?draft=<token>`` ("Back to editing" on a draft's preview), the form shows
        the unsaved edits that were previewed, still unsaved."""
        token = request.GET.get("draft", "")
        if request.method == "GET" and token and object_id.isdigit():
            data = selectors.question_draft_form_data(
                session=request.session, question_id=int(object_id), token=token
            )
            if data is not None:
                posted = QueryDict(mutable=True)
                for key, values in data.items():
                    posted.setlist(key, values)
                setattr(request, DRAFT_FORM_ATTR, posted)
                extra_context = {**(extra_context or {}), "draft_restored": True}
        return super().change_view(request, object_id, form_url, extra_context)

    def _question_for_change(self, request: HttpRequest, pk: int) -> Question:
        question = get_object_or_404(Question, pk=pk)
        # Not only is_staff: these pages judge and stage edits, so they need the right to edit.
        if not self.has_change_permission(request, question):
            raise PermissionDenied
        return question

    @admin.action(
        description="Validate: run the assessor on the example answers", permissions=["change"]
    )
    def validate_action(
        self, request: HttpRequest, queryset: QuerySet[Question]
    ) -> HttpResponse | None:
        if queryset.count() != 1:
            self.message_user(request, MSG_VALIDATE_ONE, messages.WARNING)
            return None
        url = reverse("admin:questions_question_validate", args=[queryset.get().pk])
        return HttpResponseRedirect(url)

    def validate_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        question = self._question_for_change(request, object_id)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Validate “{question.title}”",
            "question": question,
            "opts": self.model._meta,
        }
        report = services.question_validate(question=question)
        only_wrong = request.GET.get("show") == "wrong"
        shown = [v for v in report.verdicts if not (only_wrong and v.right)]
        page = Paginator(shown, VALIDATE_PAGE_SIZE).get_page(request.GET.get("page"))
        choices = example_choices(question)
        context.update(
            cross_validation=(
                selectors.question_cross_validation(question=question)
                if selectors.question_reads_by_meaning(question=question)
                else None
            ),
            report=report,
            only_wrong=only_wrong,
            shown=page.object_list,
            shown_count=len(shown),
            page_obj=page,
            first_number=page.start_index(),
            key_point_choices=choices.key_points,
            wrong_answer_choices=choices.wrong_answers,
            judgement_url=reverse("admin:questions_question_judgement", args=[question.pk]),
            here=request.get_full_path(),
        )
        return TemplateResponse(request, "admin/questions/question/validate.html", context)

    def judgement_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """POST: an assessor's judgement marked wrong, kept with the instructor's labels (a
        trial answer becomes an example answer; an example gets its labels corrected)."""
        question = self._question_for_change(request, object_id)
        return _judgement_post(request, question)

    def preview_draft_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """The change form, POSTed here by "Preview unsaved changes": validated like a save,
        kept in the session instead of the database, and shown on the preview."""
        question = self._question_for_change(request, object_id)
        # Validating the form writes the edit onto this instance (in memory only), slug
        # included: the preview lives at the saved slug.
        preview_url = reverse("questions:preview", args=[question.slug])
        if request.method != "POST":
            return HttpResponseRedirect(preview_url)
        form_class = self.get_form(request, question, change=True)
        form = form_class(request.POST, request.FILES, instance=question)
        form_valid = form.is_valid()
        formsets, _ = self._create_formsets(request, form.instance, change=True)
        if not (form_valid and all(fs.is_valid() for fs in formsets)):
            errors = [str(e) for e in form.errors.values()]
            for formset in formsets:
                errors += [str(e) for e in formset.non_form_errors()]
                errors += [str(e) for f in formset.errors for e in f.values()]
            context = {
                **self.admin_site.each_context(request),
                "title": MSG_DRAFT_INVALID,
                "question": question,
                "opts": self.model._meta,
                "errors": errors,
            }
            return TemplateResponse(
                request, "admin/questions/question/draft_invalid.html", context, status=400
            )
        content: dict[str, Any] = {
            "fields": {name: getattr(form.instance, name) for name in DRAFT_QUESTION_FIELDS},
            "roles": [role.pk for role in form.cleaned_data.get("roles", [])],
        }
        for formset in formsets:
            names = DRAFT_INLINE_FIELDS.get(formset.prefix)
            if names is not None:
                content[formset.prefix] = _draft_rows(formset, names)
        form_data = {
            key: request.POST.getlist(key) for key in request.POST if key not in DRAFT_NOT_KEPT
        }
        token = services.question_draft_save(
            session=request.session, question=question, content=content, form_data=form_data
        )
        return HttpResponseRedirect(f"{preview_url}?draft={token}")

    def view_on_site(self, obj: Question) -> str:  # type: ignore[override]
        # "View on site" shows the preview, which also works for drafts.
        return reverse("questions:preview", kwargs={"slug": obj.slug})

    @admin.display(description="Preview")
    def preview_link(self, obj: Question) -> str:
        if not obj.pk:
            return "Save first to preview."
        url = reverse("questions:preview", kwargs={"slug": obj.slug})
        return format_html('<a href="{}" target="_blank" rel="noopener">Preview the page</a>', url)

    @admin.action(description="Publish the selected questions", permissions=["change"])
    def publish(self, request: HttpRequest, queryset: QuerySet[Question]) -> None:
        count = 0
        for question in queryset.exclude(status=Status.PUBLISHED):
            services.question_publish(question=question)
            count += 1
        self.message_user(request, f"Published {count} question(s).", messages.SUCCESS)

    @admin.action(description="Unpublish (back to draft)", permissions=["change"])
    def unpublish(self, request: HttpRequest, queryset: QuerySet[Question]) -> None:
        count = 0
        for question in queryset.filter(status=Status.PUBLISHED):
            services.question_unpublish(question=question)
            count += 1
        self.message_user(request, f"Moved {count} question(s) back to draft.", messages.SUCCESS)


@admin.register(ExampleAnswer)
class ExampleAnswerAdmin(admin.ModelAdmin):
    """Every example answer, filterable; added from the question's page (it knows the
    question, so it can offer that question's key points and wrong answers)."""

    form = ExampleAnswerForm
    list_display = ("short_text", "question", "target", "expected", "expected_wrong_answer")
    list_filter = ("question", ("follow_up", admin.EmptyFieldListFilter))
    list_select_related = ("question", "follow_up")
    search_fields = ("text", "note")
    fields = (
        "question",
        "text",
        "follow_up",
        "expected_key_points",
        "expected_wrong_answer",
        "note",
        "ordering",
    )
    readonly_fields = ("question",)

    @admin.display(description="Answer")
    def short_text(self, obj: ExampleAnswer) -> str:
        return obj.text[:100]

    @admin.display(description="Answers")
    def target(self, obj: ExampleAnswer) -> str:
        return f"follow-up {obj.follow_up.ordering + 1}" if obj.follow_up else "the question"

    @admin.display(description="Expected key points")
    def expected(self, obj: ExampleAnswer) -> str:
        return ", ".join(obj.expected_key_points or []) or "none"

    def get_form(
        self, request: HttpRequest, obj: ExampleAnswer | None = None, **kwargs: Any
    ) -> type[forms.ModelForm]:
        form_class = super().get_form(request, obj, **kwargs)
        question = obj.question if obj else None

        class BoundToQuestion(form_class):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any, **kw: Any) -> None:
                kw.setdefault("question", question)
                super().__init__(*args, **kw)

        return BoundToQuestion

    def formfield_for_foreignkey(
        self, db_field: ForeignKey, request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField | None:
        if db_field.name == "follow_up":
            object_id = request.resolver_match.kwargs.get("object_id")
            example = ExampleAnswer.objects.filter(pk=object_id or 0).first()
            kwargs["queryset"] = FollowUp.objects.filter(
                question_id=example.question_id if example else 0
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Role)
class RoleAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "ordering")
    prepopulated_fields = {"slug": ("name",)}


@admin.register(Page)
class PageAdmin(admin.ModelAdmin):
    list_display = ("title", "slug", "status", "updated")
    prepopulated_fields = {"slug": ("title",)}


@admin.register(Attempt)
class AttemptAdmin(admin.ModelAdmin):
    """Read-only: attempts are the candidates' own records."""

    list_display = ("created", "user", "question", "follow_up", "score")
    list_filter = ("question",)
    list_select_related = ("user", "question", "follow_up")
    readonly_fields = (
        "user",
        "session_key",
        "question",
        "follow_up",
        "text",
        "assessment",
        "created",
    )

    @admin.display(description="Score")
    def score(self, obj: Attempt) -> object:
        return obj.assessment.get("score", obj.assessment.get("correct"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Attempt | None = None) -> bool:
        return False
