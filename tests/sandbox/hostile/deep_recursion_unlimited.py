# status: ok|signaled|memory-limit|cpu-limit
# limits: wall=10 cpu=4 memory=128
# check: no-output
import sys

sys.setrecursionlimit(10**9)


def attention(Q, K, V, mask=None, depth=0):
    return attention(Q, K, V, mask, depth + 1)
