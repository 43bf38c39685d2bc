"""The Celery app. Settings come from Django settings under the ``CELERY_`` namespace."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.settings")

app = Celery("quizsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
