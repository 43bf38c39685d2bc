"""URL routes of the grader app: one module per concern, mirroring `grader.views`."""
