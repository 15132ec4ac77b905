"""Exact integration of systems that are linear between events (state-transition matrices)."""
