"""Tests of ``racing-demon serve`` (issue 31)."""
