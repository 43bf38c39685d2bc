"""Reads of the site-wide models (API tokens, login failures)."""
