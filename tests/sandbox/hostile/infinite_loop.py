# status: cpu-limit
# limits: wall=6 cpu=1
def attention(Q, K, V, mask=None):
    while True:
        pass
