# status: wall-limit
# limits: wall=1.5 cpu=5
import time


def attention(Q, K, V, mask=None):
    time.sleep(10**6)
