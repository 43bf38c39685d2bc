# status: memory-limit
# limits: wall=10 cpu=5 memory=256
import numpy as np

hoard = []


def attention(Q, K, V, mask=None):
    while True:
        hoard.append(np.ones(2**20))  # 8 MiB, touched
