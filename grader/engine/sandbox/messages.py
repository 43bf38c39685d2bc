"""Student-facing messages of the sandbox, in one place so tests can assert on them.

Templates use str.format with the named fields shown. They are plain text: the caller escapes
them (and the captured stdout) before showing them in HTML.
"""

MSG_SYNTAX_ERROR = "Syntax error on line {line}: {msg}"
MSG_SYNTAX_ERROR_NO_LINE = "Your code could not be compiled: {msg}"
MSG_MISSING_ENTRY_POINT = "Your code does not define a function named `{entry_point}`."
MSG_IMPORT_ERROR = "Your code raised an exception while being loaded:\n{traceback}"
# The limits in the words every place states them: the exercise page and the API
# (LIMITS_TEXT, from the exercise's Limits) and the messages of a run that hit one.
CPU_TIME = "{seconds:g} s of CPU time"
WALL_TIME = "{seconds:g} s of wall-clock time"
MEMORY = "{mb} MB of memory"
LIMITS_TEXT = "{cpu} ({wall}), {memory}"
MSG_CPU_LIMIT = "Time limit exceeded: your code used more than " + CPU_TIME + "."
MSG_WALL_LIMIT = "Time limit exceeded: your code ran for more than " + WALL_TIME + "."
MSG_MEMORY_LIMIT = "Memory limit exceeded: your code tried to use more than {mb} MB."
MSG_OUTPUT_LIMIT = "Output limit exceeded: your code printed more than {kib} KiB."
MSG_SIGNALED = "Your code crashed (killed by signal {signal})."
MSG_EXITED = "Your code exited (exit status {code}) before returning all results."
MSG_BAD_OUTPUT = "Your code's results could not be read back (protocol broken or too large)."
MSG_INTERNAL = "The grader had an internal problem; this is not your fault. Please try again."

# Per call (CallResult.error).
MSG_NOT_NUMERIC = (
    "Your function returned {type} (dtype {dtype}); expected a numeric array "
    "(bool, int, uint or float)."
)
MSG_OUTPUT_TOO_LARGE = "Your function returned an array of {nbytes} bytes; at most {max} allowed."
MSG_CALL_EXCEPTION = "{traceback}"
MSG_OUTPUT_UNREADABLE = "Your function's result could not be read back."
