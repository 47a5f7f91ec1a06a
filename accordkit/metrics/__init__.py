"""Metric implementations: pure functions from canonical episodes to metric values."""
