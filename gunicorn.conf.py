"""gunicorn's settings for this site; gunicorn reads this file from its working directory.

Sync workers (one request at a time each, no threads) behind a reverse proxy that buffers
requests and responses (nginx, a load balancer), so a slow client never holds a worker. On the
2-core benchmark machine they cost 5.8 ms of CPU per submit against 7.0 ms for 2 processes of 4
threads, and sustain 91 verdicts/s against 81 (bench/pipeline.py --web-threads 4), with the
question page as fast while grading (bench/pages.py). ``WEB_CONCURRENCY`` sets the processes
(about the cores of the web host), ``WEB_THREADS`` threads each (more than 1: gthread workers).
"""

import os

workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("WEB_THREADS", "1"))
# A request waits in the listen queue while both workers are busy; the proxy's own timeouts
# bound the wait the client sees.
backlog = 2048
timeout = 30
