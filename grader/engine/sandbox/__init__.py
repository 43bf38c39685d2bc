"""The code sandbox: student code runs in a warm, layered bubblewrap zygote. No Django here."""

from grader.engine.sandbox.executor import SandboxExecutor, SandboxUnavailable

__all__ = ["SandboxExecutor", "SandboxUnavailable"]
