# status: exited
import sys

sys.exit("bye")
