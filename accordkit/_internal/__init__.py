"""Process helpers shared by every layer; nothing here knows about benchmarks or metrics.

- :mod:`~accordkit._internal.arrow`: Arrow helpers that know no schema (one column's array,
  a dataset's rows as one table).
- :mod:`~accordkit._internal.env`: environment defaults set before datasets / litellm load.
- :mod:`~accordkit._internal.files`: atomic file writes and streamed sha256 digests.
- :mod:`~accordkit._internal.gc`: ``gc_paused``, no cyclic collection during bulk steps.
- :mod:`~accordkit._internal.jsontext`: JSON text to Python values, as ``json.loads`` gives them.
- :mod:`~accordkit._internal.lock`: one writer per output folder (a lock beside it).
- :mod:`~accordkit._internal.pool`: stop a process pool at once on Ctrl-C or SIGTERM.
- :mod:`~accordkit._internal.quiet`: keeps tqdm's widget notice off report pages.
- :mod:`~accordkit._internal.redact`: credentials out of every source name written down.
- :mod:`~accordkit._internal.ray_cluster`: Ray sessions, a cluster's nodes, a local cluster
  of several nodes (for the scoring engines and the judges alike).
- :mod:`~accordkit._internal.resources`: where the report's notebooks and the sample data are.
- :mod:`~accordkit._internal.warnings_format`: warnings shown as category and message only.
"""
