"""Deterministic scripted simulators that make the embedded sample data."""
