"""Helpers every app shares: Markdown rendering, rate limits and throttles, API fields, parsers
and schema, the site-wide middleware, the static files storage and the Celery broker transport.

It imports no app of this project (the layers contract in pyproject.toml checks it), and it has
no models.
"""
