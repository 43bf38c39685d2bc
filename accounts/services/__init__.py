"""Writes of the site-wide models (API tokens)."""
