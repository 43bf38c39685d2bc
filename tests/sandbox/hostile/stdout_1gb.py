# status: output-limit
# limits: wall=20 cpu=10
import sys


def attention(Q, K, V, mask=None):
    chunk = "x" * (1 << 20)
    for _ in range(1024):
        sys.stdout.write(chunk)
