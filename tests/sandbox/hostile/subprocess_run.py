# status: ok
# check: call-error=PermissionError
# host-absent: /tmp/pwned-subprocess
import subprocess


def attention(Q, K, V, mask=None):
    subprocess.run(["touch", "/tmp/pwned-subprocess"], check=True)
