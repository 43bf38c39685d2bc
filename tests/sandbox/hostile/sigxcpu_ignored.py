# status: cpu-limit
# limits: wall=8 cpu=1
import signal

signal.signal(signal.SIGXCPU, signal.SIG_IGN)


def attention(Q, K, V, mask=None):
    while True:
        pass
