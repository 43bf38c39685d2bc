"""Exercises, their hidden checks, and submissions (the database is the source of truth)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Self

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from grader.engine.limits import CODE_MAX_BYTES
from grader.engine.status import VerdictStatus

if TYPE_CHECKING:
    from grader.engine.grading import Verdict


class TransitionQuerySet(models.QuerySet):
    """Rows a worker moves from one state to the next; the queryset is the condition."""

    def transition(self, pk: int, **values: Any) -> bool:
        """Set ``values`` on the row ``pk`` if it still matches this queryset; True if this
        caller moved it.

        The one claim idiom of the project (a grade, a staff job, a lease, a verdict's write):
        a single conditional UPDATE, never read-then-write. A redelivered message, the
        sweeper's re-publish and the original can reach two workers at once, and only one
        UPDATE can match: PostgreSQL re-checks the condition on the row the other committed,
        SQLite runs one writer at a time.
        """
        return bool(self.filter(pk=pk).update(**values))


# The default smallest score move a regrade announces to the student (see Regrade).
REGRADE_NOTICE_THRESHOLD = 0.05


class Exercise(models.Model):
    class Kind(models.TextChoices):
        # The kind selects the trusted reference and the known wrong implementations.
        ATTENTION = "attention", "Scaled dot-product attention"
        MULTI_HEAD = "multi-head-attention", "Multi-head attention"
        SOFTMAX = "softmax", "Softmax"
        SOFTMAX_BACKWARD = "softmax_backward", "Softmax backward"
        ATTENTION_BACKWARD = "attention_backward", "Attention backward"
        DEMONSTRATION = "demonstration", "The ten-minute demonstration"

    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    kind = models.CharField(max_length=40, choices=Kind.choices)
    statement = models.TextField(help_text="Markdown with math; the exact contract students see.")
    starter_code = models.TextField()
    entry_point = models.CharField(max_length=80)
    reference_solution = models.TextField(
        help_text="Never shown to students. Validate runs it through the sandbox; it must pass."
    )
    question_slug = models.SlugField(
        blank=True, help_text="The interview question this exercise demonstrates."
    )
    time_limit_seconds = models.FloatField(default=5.0)
    memory_limit_mb = models.PositiveIntegerField(default=512)
    deadline = models.DateTimeField(
        null=True, blank=True, help_text="Checks shown 'after deadline' are revealed after this."
    )
    is_published = models.BooleanField(default=True)
    order = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("order", "slug")

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        from django.urls import reverse

        return reverse("grader:exercise-detail", kwargs={"slug": self.slug})

    @property
    def deadline_passed(self) -> bool:
        return self.deadline is not None and timezone.now() >= self.deadline


class ExerciseCheck(models.Model):
    """One hidden check of an exercise: a named check from the library with its parameters."""

    class Visibility(models.TextChoices):
        SHOWN = "shown", "Message shown to students"
        HIDDEN = "hidden", "Only pass/fail shown"
        AFTER_DEADLINE = "after-deadline", "Message shown after the deadline"

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="checks")
    name = models.CharField(
        max_length=80, help_text="A check from the library (grader.engine.checks)."
    )
    label = models.CharField(max_length=200, blank=True)
    params = models.JSONField(default=dict, blank=True)
    weight = models.FloatField(default=1.0)
    visibility = models.CharField(
        max_length=20, choices=Visibility.choices, default=Visibility.SHOWN
    )
    order = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ("order", "id")

    def __str__(self) -> str:
        return self.label or self.name

    # A worker keeps each exercise's checks in memory, keyed by the exercise's updated_at
    # (grader.selectors.exercises.exercise_spec_for_grading): every change to a check moves
    # it. A queryset .update() of checks would not; nothing in the project does one.
    def save(self, *args: Any, **kwargs: Any) -> None:
        super().save(*args, **kwargs)
        self._exercise_touch()

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        deleted = super().delete(*args, **kwargs)
        self._exercise_touch()
        return deleted

    def _exercise_touch(self) -> None:
        Exercise.objects.filter(pk=self.exercise_id).update(updated_at=timezone.now())


class SubmissionQuerySet(TransitionQuerySet):
    def queued(self) -> Self:
        return self.filter(status=Submission.Status.QUEUED)

    def waiting(self) -> Self:
        """Queued or running: what the queue caps count."""
        return self.filter(status__in=Submission.WAITING_STATUSES)

    def lease_expired(self, *, now: datetime) -> Self:
        """Running under a lease that ran out: its worker died or is wedged."""
        return self.filter(status=Submission.Status.RUNNING, lease_expires_at__lte=now)

    def claimable(self, *, now: datetime, one_running_per_user: bool) -> Self:
        """What a worker may claim: queued, or running under an expired lease (never because
        the claimant's name matches: a name is no proof of being the same live process).
        grader.services.queue writes this condition out for the claim; a test keeps the two
        equal."""
        rows = self.filter(
            Q(status=Submission.Status.QUEUED)
            | Q(status=Submission.Status.RUNNING, lease_expires_at__lte=now)
        )
        if one_running_per_user:
            # Fair share: while one of a user's submissions runs (under a live lease), their
            # others wait, so three accounts burning CPU hold at most one worker slot each.
            live = Submission.objects.filter(
                user=OuterRef("user"), status=Submission.Status.RUNNING, lease_expires_at__gt=now
            ).exclude(pk=OuterRef("pk"))
            rows = rows.exclude(Exists(live))
        return rows

    def held(self, submission: Submission) -> Self:
        """The row while the claim ``submission`` holds it. ``attempts`` is the fencing token
        (a takeover bumps it), ``worker`` the holder: a late write or heartbeat of a holder
        whose lease ran out and was taken over matches nothing."""
        return self.filter(
            pk=submission.pk,
            status=Submission.Status.RUNNING,
            attempts=submission.attempts,
            worker=submission.worker,
        )


class Submission(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        # The final states are the engine's verdict statuses (grader.engine.status).
        PASSED = VerdictStatus.PASSED.value, "Passed"
        FAILED = VerdictStatus.FAILED.value, "Failed"
        ERROR = VerdictStatus.ERROR.value, "Error"  # the student's code could not be evaluated
        INTERNAL_ERROR = VerdictStatus.INTERNAL_ERROR.value, "Internal error"  # ours; not charged

    FINAL_STATUSES = (Status.PASSED, Status.FAILED, Status.ERROR, Status.INTERNAL_ERROR)
    WAITING_STATUSES = (Status.QUEUED, Status.RUNNING)
    SEED_UNDRAWN = -1  # seeds are drawn from [0, 2**31)
    # Not stored: the queue position submission_create counted in the transaction that
    # inserted the row, so the submit's answer needs no second count. None on rows read back.
    queue_position_at_insert: int | None = None

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions"
    )
    exercise = models.ForeignKey(Exercise, on_delete=models.PROTECT, related_name="submissions")
    code = models.TextField(max_length=CODE_MAX_BYTES)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    score = models.FloatField(null=True, blank=True)
    # Per-check results: [{"name", "label", "passed", "message", "weight", "visibility"}].
    checks = models.JSONField(default=list, blank=True)
    diagnosis = models.JSONField(default=list, blank=True)  # misconception codes
    message = models.TextField(blank=True)  # student-facing summary (e.g. the syntax error)
    stdout = models.TextField(blank=True)  # what the code printed, capped; shown escaped
    plots = models.JSONField(default=dict, blank=True)  # hidden-free pictures of the function
    # Seed of the hidden inputs, stored so a verdict can be replayed. Drawn by the worker at the
    # first claim (SEED_UNDRAWN until then), which lets it prepare the inputs while idle.
    seed = models.BigIntegerField()
    attempts = models.PositiveSmallIntegerField(default=0)
    worker = models.CharField(max_length=200, blank=True)
    # Phase timestamps, as PrairieLearn records them.
    received_at = models.DateTimeField(default=timezone.now)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # A claim on a running row expires, so a worker that died mid-grade doesn't hold it forever.
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # The fair-share priority its grade task was last published with (0 is served first): the
    # queue position shown to the student counts in the order the broker serves.
    priority = models.PositiveSmallIntegerField(default=0)
    # Set when a regrade sends the row through the pipeline again, with the verdict it had
    # then: the finished grade compares against it to tell the student (RegradeNotice).
    regrade = models.ForeignKey(
        "Regrade", null=True, blank=True, on_delete=models.SET_NULL, related_name="submissions"
    )
    regrade_old_status = models.CharField(max_length=20, blank=True)
    regrade_old_score = models.FloatField(null=True, blank=True)

    objects = SubmissionQuerySet.as_manager()

    class Meta:
        ordering = ("-received_at", "-id")
        indexes = [
            models.Index(fields=["status", "lease_expires_at"]),
            # The queue position shown on every poll and the sweeper's "queued too long" scan.
            models.Index(fields=["status", "queued_at"]),
            models.Index(fields=["user", "exercise", "-received_at"]),
            # Fair share: a user's recent sandbox seconds, read at every publish.
            models.Index(fields=["user", "finished_at"], name="grader_sub_user_finished"),
        ]
        # Regrading rewrites students' scores: a right of its own, apart from reading them.
        permissions = [("regrade_submission", "Can regrade the submissions of an exercise")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.exercise.slug} by {self.user} ({self.status})"

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL_STATUSES

    # The fields a verdict sets (verdict_apply).
    VERDICT_FIELDS = (
        "status",
        "score",
        "checks",
        "diagnosis",
        "message",
        "stdout",
        "plots",
        "finished_at",
        "lease_expires_at",
    )

    def verdict_apply(
        self, verdict: Verdict, *, plots: dict[str, Any] | None = None, now: datetime | None = None
    ) -> dict[str, Any]:
        """Set this row's verdict fields from the engine's verdict; returns them by name, for
        the conditional write of the claim that holds the row (grader.services.queue)."""
        self.status = verdict.status
        # An internal error is no verdict on the student's code: it has no score.
        internal = verdict.status == VerdictStatus.INTERNAL_ERROR
        self.score = None if internal else float(verdict.score)
        self.checks = [
            {
                "name": c.name,
                "label": c.label,
                "passed": c.passed,
                "message": c.message,
                "weight": c.weight,
                "visibility": c.visibility,
            }
            for c in verdict.checks
        ]
        self.diagnosis = list(verdict.diagnosis)
        self.message = verdict.message
        self.stdout = verdict.stdout
        self.plots = plots or {}
        self.finished_at = now or timezone.now()
        self.lease_expires_at = None
        return {name: getattr(self, name) for name in self.VERDICT_FIELDS}


class WorkerJobQuerySet(TransitionQuerySet):
    def queued(self) -> Self:
        return self.filter(status=WorkerJob.Status.QUEUED)


class WorkerJob(models.Model):
    """A staff request that a worker computes (the web runs no sandbox): queued, claimed once
    by one worker, then done or failed. The rows say what was asked and what came of it."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = WorkerJobQuerySet.as_manager()

    class Meta:
        abstract = True
        ordering = ("-created_at", "-id")

    @property
    def is_final(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @classmethod
    def claim(cls, pk: int) -> WorkerJob | None:
        """The job, now running, if this caller is the one to run it; else None (a redelivered
        message must not run the same job twice)."""
        if not cls.objects.queued().transition(pk, status=cls.Status.RUNNING):
            return None
        return cls.objects.select_related("exercise").get(pk=pk)

    def finish(self, *, failed: bool, fields: tuple[str, ...] = ()) -> None:
        self.status = self.Status.FAILED if failed else self.Status.DONE
        self.finished_at = timezone.now()
        self.save(update_fields=["status", "finished_at", *fields])


class RegradePreview(WorkerJob):
    """What regrading an exercise would change, computed by a worker; stores no verdict."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="previews")
    total = models.PositiveIntegerField(default=0)
    graded = models.PositiveIntegerField(default=0)
    # [{"submission_id", "username", "old_status", "new_status", "old_score", "new_score"}]
    changes = models.JSONField(default=list, blank=True)

    class Meta(WorkerJob.Meta):
        pass

    def __str__(self) -> str:
        return f"Regrade preview of {self.exercise.slug} ({self.status})"


class ExerciseValidation(WorkerJob):
    """The admin's Validate of an exercise, computed by a worker (the web runs no sandbox)."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="validations")
    # The report as the page shows it (see grader.services.exercises.validation_report_view).
    report = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)

    class Meta(WorkerJob.Meta):
        pass

    def __str__(self) -> str:
        return f"Validation of {self.exercise.slug} ({self.status})"


# --- Regrades applied, and what students are told -----------------------------------------


class Regrade(models.Model):
    """An applied regrade: every final submission of the exercise graded again (same seeds)."""

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="regrades")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The preview it applied (None when applied without one); that preview is used up.
    preview = models.ForeignKey(
        RegradePreview,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="applied_as",
    )
    total = models.PositiveIntegerField(default=0)
    # When the exercise (its checks) last changed before this regrade: the notices' reason.
    checks_changed_at = models.DateTimeField()
    created_at = models.DateTimeField(default=timezone.now)
    # A score that moves less than this (status unchanged) is listed in the student's details
    # but not announced: a regrade of many attempts must not bury the page under notices.
    notice_threshold = models.FloatField(
        default=REGRADE_NOTICE_THRESHOLD,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Score moves smaller than this are listed in the details, not announced.",
    )

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return f"Regrade of {self.exercise.slug} ({self.total} submissions)"


class RegradeNotice(models.Model):
    """A student's score changed in a regrade: shown on their pages until they dismiss it."""

    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="regrade_notices"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="regrade_notices"
    )
    old_status = models.CharField(max_length=20, choices=Submission.Status.choices)
    old_score = models.FloatField(null=True, blank=True)
    new_status = models.CharField(max_length=20, choices=Submission.Status.choices)
    new_score = models.FloatField(null=True, blank=True)
    reason = models.CharField(max_length=300)
    created_at = models.DateTimeField(default=timezone.now)
    seen_at = models.DateTimeField(null=True, blank=True)
    # The regrade that wrote it: a student sees one notice per exercise per regrade, whatever
    # the number of attempts it changed (None: written before notices were grouped).
    regrade = models.ForeignKey(
        Regrade, null=True, blank=True, on_delete=models.SET_NULL, related_name="notices"
    )
    # False for a score move below the regrade's threshold: in the details, not announced.
    announced = models.BooleanField(default=True)

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = [models.Index(fields=["user", "seen_at"], name="grader_notice_user_seen")]

    def __str__(self) -> str:
        return f"Regrade notice for #{self.submission_id} ({self.old_status} -> {self.new_status})"


# --- Run before Submit --------------------------------------------------------------------------


class TrialRun(WorkerJob):
    """A student's Run: their code on the visible examples and their own small input, computed
    by a worker in the sandbox. Not a Submission: no hidden input, no check, no score."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="trial_runs"
    )
    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="trial_runs")
    code = models.TextField(max_length=CODE_MAX_BYTES)
    # The custom input as the API takes it (grader.engine.trials), or null: the examples only.
    input_spec = models.JSONField(null=True, blank=True)
    # The report of grader.engine.trials.trial_execute: status, message, stdout, cases.
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)

    class Meta(WorkerJob.Meta):
        indexes = [models.Index(fields=["user", "-created_at"], name="grader_trial_user_created")]

    def __str__(self) -> str:
        return f"Run #{self.pk} of {self.exercise.slug} by {self.user} ({self.status})"
