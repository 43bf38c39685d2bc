"""Web pages of the grader app: one module per concern (exercises, submissions)."""
