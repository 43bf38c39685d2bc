"""The code sandbox: student code runs in a warm, layered bubblewrap zygote. No Django here."""

from grader.sandbox.executor import SandboxExecutor, SandboxUnavailable

__all__ = ["SandboxExecutor", "SandboxUnavailable"]
