# status: ok
# check: call-error=RecursionError
def attention(Q, K, V, mask=None):
    return attention(Q, K, V, mask)
