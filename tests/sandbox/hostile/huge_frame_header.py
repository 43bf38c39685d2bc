# status: bad-output
import os
import struct


def attention(Q, K, V, mask=None):
    os.write(3, struct.pack("<cI", b"O", 0xFFFFFFFF) + b"x" * 1000)
    while True:
        os.write(3, b"x" * 65536)
