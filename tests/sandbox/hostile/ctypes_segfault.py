# status: signaled
import ctypes


def attention(Q, K, V, mask=None):
    ctypes.string_at(0)
