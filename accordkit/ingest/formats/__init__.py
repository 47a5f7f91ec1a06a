"""One module per format: how each is recognised, converted and checked.

- :mod:`~accordkit.ingest.formats.parquet`: canonical episodes as parquet.
"""
