# status: bad-output
import os
import struct


def attention(Q, K, V, mask=None):
    # Well-framed call-error frames whose JSON would blow the parser's recursion (and a too
    # long one): the trusted side must call it bad output, not crash.
    for payload in (b"[" * 30000, b'{"code": "exception", "traceback": ' + b"[" * 20000 + b"]"):
        os.write(3, struct.pack("<cI", b"E", len(payload)) + payload)
    os._exit(0)
