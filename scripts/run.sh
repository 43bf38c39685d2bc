#!/usr/bin/env bash
# `make run`: migrate, load content, demo accounts, Redis if needed, a Celery worker + beat,
# and the web server. Ctrl-C stops everything this script started.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
# A development .env, so the README's `manage.py` commands work as written in a new shell
# (settings read it; an existing .env is never touched).
if [ ! -e .env ]; then
  printf '# Written by `make run` for development; see .env.example.\nDEBUG=true\nSECRET_KEY=%s\n' \
    "$($PY -c 'import secrets; print(secrets.token_urlsafe(50))')" > .env
  echo "Wrote a development .env (DEBUG=true and a random SECRET_KEY)."
fi
export DEBUG="${DEBUG:-true}"
PORT="${PORT:-8000}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"
export REDIS_URL
pids=()
cleanup() {
  trap - INT TERM EXIT
  echo
  echo "Stopping: ${pids[*]:-nothing}"
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup INT TERM EXIT

$PY manage.py migrate --noinput
# New content files since the last run (instructor edits stay; see questions/content/README.md).
$PY manage.py load_content
$PY manage.py demo_accounts

if ! $PY -c "import redis,os; redis.Redis.from_url(os.environ['REDIS_URL'], socket_connect_timeout=1).ping()" 2>/dev/null; then
  if command -v redis-server >/dev/null; then
    port=$($PY -c "import os,urllib.parse as u; print(u.urlparse(os.environ['REDIS_URL']).port or 6379)")
    echo "Starting redis-server on port $port"
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no &
    pids+=($!)
    sleep 0.5
  else
    echo "WARNING: nothing answers at $REDIS_URL and redis-server is not installed; submissions will wait in the database until a broker is up." >&2
  fi
fi

# The worker and the sweeper (beat) log to run/; the web server's requests show here.
mkdir -p run
# -Q: grading (celery) and the sweeper's own queue; one beat publishes the sweeps.
.venv/bin/celery -A quizsite worker --loglevel=INFO --concurrency="${WORKERS:-2}" -n "worker@%h" \
  -Q celery,sweeper >run/worker.log 2>&1 &
pids+=($!)
.venv/bin/celery -A quizsite beat --loglevel=INFO --schedule=run/celerybeat-schedule \
  >run/beat.log 2>&1 &
pids+=($!)
$PY manage.py runserver "127.0.0.1:$PORT" --noreload &
pids+=($!)
for _ in $(seq 1 100); do
  curl -fs -o /dev/null "http://127.0.0.1:$PORT/" && break
  sleep 0.2
done
cat <<BANNER

  ================================================================
   The site is up:  http://127.0.0.1:$PORT/
   Log in as  instructor / instructor-demo-pass  (authoring: /admin/)
          or  student / student-demo-pass
   Grading worker log: run/worker.log   sweeper log: run/beat.log
   Ctrl-C stops everything this command started.
  ================================================================

BANNER
wait -n "${pids[@]}" || true
