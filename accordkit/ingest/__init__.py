"""The loading corridor: sources -> inputs -> checked canonical rows.

- :mod:`~accordkit.ingest.report`: what a load read and left out (:class:`LoadReport`).
- :mod:`~accordkit.ingest.check`: the one checker of canonical rows against the schema.
"""
