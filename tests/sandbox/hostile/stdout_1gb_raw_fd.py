# status: output-limit
# limits: wall=20 cpu=10
import os


def attention(Q, K, V, mask=None):
    chunk = b"x" * (1 << 20)
    for _ in range(1024):
        os.write(2, chunk)
