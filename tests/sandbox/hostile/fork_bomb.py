# status: ok
# check: call-error=PermissionError
# limits: wall=5 cpu=2
import os


def attention(Q, K, V, mask=None):
    while True:
        os.fork()
