"""Settings, all from the environment (see README "Settings" and .env.example)."""

from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG: bool = env.bool("DEBUG", default=False)

# A development key only when DEBUG is on, so a production deploy without SECRET_KEY fails loudly.
if DEBUG:
    SECRET_KEY = env.str(
        "SECRET_KEY", default="dev-insecure-key-do-not-use-in-production-0123456789"
    )
else:
    SECRET_KEY = env.str("SECRET_KEY")

ALLOWED_HOSTS: list[str] = env.list(
    "ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"] if DEBUG else []
)
CSRF_TRUSTED_ORIGINS: list[str] = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    # API tokens stored as a hash, with an expiry (accounts.authentication, accounts.api).
    "knox",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "accounts.apps.AccountsConfig",
    "common.apps.CommonConfig",
    "questions",
    "grader",
    # Above grader and questions: assignments count their submissions and answers.
    "courses.apps.CoursesConfig",
    # LTI 1.3 tool (django-lti): registrations, keys, launches; lti ties them to courses.
    "lti_tool",
    "lti.apps.LtiConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Outside the session and CSRF middleware: it sees the cookies they set (static files,
    # served above, are the same for everyone).
    "common.middleware.PrivateCacheMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "common.middleware.PermissionsPolicyMiddleware",
    # Last: it sees the login form's failures after authentication has run.
    "axes.middleware.AxesMiddleware",
]
# First of all: refuse an oversized body before any middleware reads it.
MIDDLEWARE.insert(0, "common.middleware.BodySizeLimitMiddleware")

ROOT_URLCONF = "quizsite.urls"
WSGI_APPLICATION = "quizsite.wsgi.application"
ASGI_APPLICATION = "quizsite.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "common.context_processors.product",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers (pages) proceed while a worker writes a verdict; IMMEDIATE takes the
    # write lock at BEGIN, so two writers queue on busy_timeout instead of failing with
    # "database is locked" when one upgrades a read lock mid-transaction.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
# Persistent connections: a new PostgreSQL connection per request or per grade cost more than
# the statements it ran (health-checked before reuse, so a restarted server costs one retry).
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Axes first: every login path (the login form, the admin, POST /api/token/) goes through
# authenticate(), where it counts failures and refuses a locked-out caller.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

# The product's one name: the header, every <title>, the admin and the API schema say this.
PRODUCT_NAME = "Attention, ÷√dₖ"

# Email (password resets). Development prints messages on the console; production sets
# EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend and the SMTP settings below.
EMAIL_BACKEND: str = env.str(
    "EMAIL_BACKEND",
    default="django.core.mail.backends.console.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST: str = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT: int = env.int("EMAIL_PORT", default=587)
EMAIL_HOST_USER: str = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD: str = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS: bool = env.bool("EMAIL_USE_TLS", default=True)
EMAIL_TIMEOUT: int = env.int("EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL: str = env.str("DEFAULT_FROM_EMAIL", default="webmaster@localhost")
# A reset link works for an hour (Django's default is three days).
PASSWORD_RESET_TIMEOUT: int = env.int("PASSWORD_RESET_TIMEOUT", default=3600)
# One address gets at most one reset mail this often, whoever asks (accounts.password_reset):
# no flood of an inbox, and another client's requests hold back the owner's mail no longer.
PASSWORD_RESET_MAIL_GAP_SECONDS: int = env.int("PASSWORD_RESET_MAIL_GAP_SECONDS", default=300)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "staticfiles")
NODE_MODULES = BASE_DIR / "node_modules"
# Front-end assets come from the npm registry (package.json) and are served locally, never
# from a CDN; only the folders the pages use are exposed.
STATICFILES_DIRS = [
    BASE_DIR / "static",
    ("vendor/katex", NODE_MODULES / "katex" / "dist"),
    ("vendor/ace", NODE_MODULES / "ace-builds" / "src-min-noconflict"),
    ("vendor/htmx", NODE_MODULES / "htmx.org" / "dist"),
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "common.storage.ManifestStaticFilesStorage"
    },
}
# Serve straight from the finders in development and tests, so no collectstatic is needed.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

REDIS_URL: str = env.str("REDIS_URL", default="redis://127.0.0.1:6379/0")

# Security: production values unless DEBUG; `manage.py check --deploy` passes with DEBUG off.
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Proxies in front of the site that append to X-Forwarded-For. 0: the header is ignored and the
# client is REMOTE_ADDR (a client can write any X-Forwarded-For it likes).
NUM_PROXIES: int = env.int("NUM_PROXIES", default=0)
# X-Forwarded-Proto says the request came over HTTPS only when our own proxy wrote it; without
# one, any client could send it and be taken for a secure request (secure cookies over HTTP,
# no redirect to HTTPS).
if NUM_PROXIES > 0:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Request bodies: refused with 413 from their Content-Length before anything reads them (the
# largest legitimate body is an admin form with a question's Markdown, well under this).
REQUEST_BODY_MAX_BYTES: int = env.int("REQUEST_BODY_MAX_BYTES", default=1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = REQUEST_BODY_MAX_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = REQUEST_BODY_MAX_BYTES
# Deeper JSON is refused with 400 (ours is at most a few levels deep).
JSON_MAX_DEPTH: int = env.int("JSON_MAX_DEPTH", default=20)

# One rate per action, counted in the shared cache (common.ratelimit) by pages and API alike.
THROTTLE_RATES: dict[str, str] = {
    "anon": env.str("THROTTLE_ANON", default="60/min"),
    "user": env.str("THROTTLE_USER", default="240/min"),
    "submissions": env.str("THROTTLE_SUBMISSIONS", default="20/min"),
    "token": env.str("THROTTLE_TOKEN", default="10/min"),
    "signup": env.str("THROTTLE_SIGNUP", default="5/hour"),
    # Reset requests per client address; past it they send no mail (accounts.password_reset).
    "password_reset": env.str("THROTTLE_PASSWORD_RESET", default="5/hour"),
    "answers": env.str("THROTTLE_ANSWERS", default="60/min"),
    "answers_anon": env.str("THROTTLE_ANSWERS_ANON", default="30/min"),
    # Run before Submit (grader.services.trials): the page and the API together.
    "runs": env.str("THROTTLE_RUNS", default="30/min"),
}

REST_FRAMEWORK = {
    # Token first: its WWW-Authenticate header makes missing credentials a 401, not a 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Every API call counts against its caller; creating submissions has a tighter scope too.
    "DEFAULT_THROTTLE_CLASSES": [
        "common.throttles.AnonRateThrottle",
        "common.throttles.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": THROTTLE_RATES,
    "DEFAULT_PARSER_CLASSES": [
        "common.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # ...and it reads JSON for views that list their own parsers too (common.parsers).
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "common.parsers.BoundedContentNegotiation",
    "NUM_PROXIES": NUM_PROXIES,
}
# API tokens (django-rest-knox): a token stops working this long after it was issued, and at
# any password change (accounts.signals). Never renewed by use, so a leaked one dies anyway.
API_TOKEN_TTL_HOURS: float = env.float("API_TOKEN_TTL_HOURS", default=720.0)
if API_TOKEN_TTL_HOURS <= 0:
    raise ImproperlyConfigured("API_TOKEN_TTL_HOURS must be positive: every token expires")
REST_KNOX = {
    "TOKEN_TTL": timedelta(hours=API_TOKEN_TTL_HOURS),
    "AUTO_REFRESH": False,
    "AUTH_HEADER_PREFIX": "Token",
}
SPECTACULAR_SETTINGS = {
    "TITLE": f"{PRODUCT_NAME} API",
    "DESCRIPTION": "Practise why attention scores are divided by sqrt(d_k), and grade numpy code.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The API docs' JavaScript and CSS come from this server, never a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Every operation's error responses (401, 429, 413...), in the shapes the API sends.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "common.schema.add_error_responses",
    ],
}

# Shared by every web process: rate limits and login lockouts must count across gunicorn
# workers and hosts, so never a per-process cache in production.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": env.str("CACHE_URL", default=REDIS_URL),
        "KEY_PREFIX": "quiz",
        # A dead Redis must cost a request milliseconds, not a hang (limits then fail open).
        "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.5},
    }
}

# Login lockout (django-axes): per username and client address, counted in the database.
# Not the cache: with axes' cache handler every login path answered 500 while Redis was down.
# A handler that failed open instead would lift every lockout for as long as Redis is down (or
# can be made slow), just when someone may be guessing. The database is shared by every web
# process and host like the cache, and is already required for any login to succeed (users,
# sessions), so lockouts hold across processes and cost no extra dependency; the price is a
# row per (username, address) that failed, cleaned when it expires or the user logs in.
# The database handler, plus a limit per client address (accounts.login_lockout says why it is
# not axes' own "ip_address" parameter).
AXES_HANDLER = "accounts.login_lockout.LoginLockoutHandler"
# No row per successful login: failures (AccessAttempt) are what a lockout needs.
AXES_DISABLE_ACCESS_LOG = True
AXES_FAILURE_LIMIT: int = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME: float = env.float("AXES_COOLOFF_HOURS", default=0.25)  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "common.ratelimit.axes_client_ip"
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# That page, saying whether the account or the whole address is paused.
AXES_LOCKOUT_CALLABLE = "accounts.login_lockout.lockout_response"
# Failed logins from one client address, whatever the usernames, within the cool-off above
# before every login from it is refused (until older failures leave that window). Well above
# AXES_FAILURE_LIMIT: a whole class may log in from behind one NAT address.
LOGIN_FAILURES_PER_ADDRESS: int = env.int("LOGIN_FAILURES_PER_ADDRESS", default=30)
AXES_VERBOSE = False

# Content-Security-Policy (django-csp): every script is a file from this server, so a
# sanitiser bug can't become an exploit: no inline script, no eval, no other origin.
# style-src keeps 'unsafe-inline': htmx injects its indicator <style>, Ace injects its theme
# <style> elements and sets style attributes, and KaTeX writes style="" into the HTML it
# renders; inline styles can't run script, so this leaves script-src strict.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "worker-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}
# No page needs a device or sensor; deny them so injected markup can't ask.
PERMISSIONS_POLICY = (
    "accelerometer=(), autoplay=(), camera=(), display-capture=(), geolocation=(), "
    "gyroscope=(), magnetometer=(), microphone=(), midi=(), payment=(), usb=(), "
    "interest-cohort=()"
)

# Celery. The Submission row is the source of truth; the broker only carries ids.
CELERY_BROKER_URL = REDIS_URL
# kombu's Redis transport, with one client per connection pool instead of one per command.
# Plain redis:// only: for any other scheme (rediss:// turns TLS on) kombu picks its own.
if CELERY_BROKER_URL.startswith("redis://"):
    CELERY_BROKER_TRANSPORT = "common.broker:Transport"
# JSON only: a task message is an id, and pickle on a broker is remote code execution.
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# The row is the result; a result backend would be a second, stale copy.
CELERY_TASK_IGNORE_RESULT = True
# Ack after grading, so a worker killed mid-grade leaves the message to be redelivered.
CELERY_TASK_ACKS_LATE = True
# ...and requeue (not fail) the message when the pool child running it dies.
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# One message at a time per process: a slow grade must not hold others' submissions hostage.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Above the largest wall limit of the sandbox (grader.engine.limits), so its own watchdog fires
# first and gives the student a precise verdict; these only catch a wedged worker.
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=60)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=90)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Above the hard time limit: Redis redelivers unacked messages after this, and a shorter
    # value would hand a still-running grade to a second worker.
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=300),
    # The worker's own connection; publishing uses tighter bounds (grader/publish.py).
    "socket_connect_timeout": 2,
    "socket_timeout": 5,
    # Fair share: a grade task's priority, 0 (first) to 9 (grader.services.submitting). One
    # Redis list per step, consumed in ascending order (kombu's BRPOP lists them so), so ten
    # steps keep every level apart; publisher and worker must agree on them. The queue order
    # stays round-robin, not "priority": priority steps are consumed before queues whatever
    # the strategy, and round-robin keeps the sweeper queue from waiting behind a backlog.
    "priority_steps": list(range(10)),
}
# Don't let a submit request hang retrying a dead broker: the sweeper is the retry.
CELERY_TASK_PUBLISH_RETRY = False
# A publish (one connect, one write) gives up after this; the row stays queued for the sweeper.
GRADER_PUBLISH_TIMEOUT_SECONDS = env.float("GRADER_PUBLISH_TIMEOUT_SECONDS", default=0.1)
# Graders yield the CPU to the web (grader.worker.worker_priority_lower): a worker and its
# sandboxes run at this niceness with SCHED_BATCH; 0 leaves their priority alone.
GRADER_WORKER_NICENESS = env.int("GRADER_WORKER_NICENESS", default=10)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Tasks running when the broker connection drops are cancelled and redelivered, not duplicated.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Grading on the default queue, sweeps on their own: a worker consumes both (a plain
# `celery worker` consumes every queue listed here), and a backlog of one never delays the
# other's messages.
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = (Queue("celery"), Queue("sweeper"))
CELERY_TASK_ROUTES = {"grader.sweep_submissions": {"queue": "sweeper"}}
GRADER_SWEEP_SECONDS = env.float("GRADER_SWEEP_SECONDS", default=5.0)
CELERY_BEAT_SCHEDULE = {
    "sweep-stuck-submissions": {
        "task": "grader.sweep_submissions",
        "schedule": GRADER_SWEEP_SECONDS,
        # A sweep not run within one interval is superseded by the next: while no worker runs,
        # the queued ones expire and are dropped on delivery instead of run back to back.
        "options": {"queue": "sweeper", "expires": GRADER_SWEEP_SECONDS},
    },
    # Scores a platform refused past the passback's own retries, sent again hourly.
    "lti-retry-grades": {
        "task": "lti.grades_retry",
        "schedule": env.float("LTI_GRADES_RETRY_SECONDS", default=60 * 60),
        "options": {"expires": 60 * 60},
    },
    # LTI courses' rosters from their platforms (names and roles service), nightly.
    "lti-sync-rosters": {
        "task": "lti.rosters_sync",
        "schedule": env.float("LTI_ROSTER_SYNC_SECONDS", default=24 * 60 * 60),
        "options": {"expires": 60 * 60},
    },
}

# Grading pipeline (see grader/services/queue.py).
# A claim on a running submission lasts this long unless renewed; past it the sweeper hands the
# row to another worker. Short, so a dead worker's submission is graded again within about
# lease + sweep interval + one grade (about 20 s with the defaults).
GRADER_LEASE_SECONDS = env.float("GRADER_LEASE_SECONDS", default=15.0)
# How often a grading worker renews its lease: a few renewals fit in one lease, so a slow
# database round trip or two never lets a live grade's lease lapse. A claim is first renewed
# within two of these (grader.heartbeat): keep the lease above that.
GRADER_HEARTBEAT_SECONDS = env.float("GRADER_HEARTBEAT_SECONDS", default=5.0)
if GRADER_LEASE_SECONDS <= 2 * GRADER_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured("GRADER_LEASE_SECONDS must exceed 2 x GRADER_HEARTBEAT_SECONDS")
# Rows still queued after this long were probably never published (Redis down or restarted).
GRADER_REQUEUE_AFTER_SECONDS = env.float("GRADER_REQUEUE_AFTER_SECONDS", default=30.0)
# Deliveries of one submission before it is declared an internal error (never charged).
GRADER_MAX_ATTEMPTS = env.int("GRADER_MAX_ATTEMPTS", default=3)
GRADER_MAX_QUEUED_PER_USER = env.int("GRADER_MAX_QUEUED_PER_USER", default=5)
GRADER_MAX_QUEUED_TOTAL = env.int("GRADER_MAX_QUEUED_TOTAL", default=2000)
# Fair share: at most one running submission per user; the others wait, re-published after
# this many seconds, so one user's backlog never holds more than one worker slot.
GRADER_ONE_RUNNING_PER_USER = env.bool("GRADER_ONE_RUNNING_PER_USER", default=True)
GRADER_FAIR_SHARE_RETRY_SECONDS = env.float("GRADER_FAIR_SHARE_RETRY_SECONDS", default=1.0)
# ...and priorities: a grade task goes behind others the more sandbox seconds its user spent in
# the last GRADER_FAIR_SHARE_WINDOW_SECONDS (one step per doubling of the step seconds), and
# behind each of the user's own earlier waiting submissions. Worth little without a prefetch of
# one (CELERY_WORKER_PREFETCH_MULTIPLIER): messages a worker holds are past reordering.
GRADER_FAIR_SHARE_PRIORITIES = env.bool("GRADER_FAIR_SHARE_PRIORITIES", default=True)
GRADER_FAIR_SHARE_WINDOW_SECONDS = env.float("GRADER_FAIR_SHARE_WINDOW_SECONDS", default=600.0)
GRADER_FAIR_SHARE_STEP_SECONDS = env.float("GRADER_FAIR_SHARE_STEP_SECONDS", default=1.0)
# Run with the remaining layers where the kernel lacks Landlock (logged loudly at startup).
SANDBOX_ALLOW_NO_LANDLOCK = env.bool("SANDBOX_ALLOW_NO_LANDLOCK", default=False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}
