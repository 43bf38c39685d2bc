# status: ok
# host-absent: /tmp/pwned-pickle
# check: call-error=expected_a_numeric_array
import os


class Payload:
    def __reduce__(self):
        return (os.system, ("touch /tmp/pwned-pickle",))


def attention(Q, K, V, mask=None):
    return Payload()
