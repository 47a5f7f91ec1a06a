"""``save`` and ``push_to_hub``: write canonical episodes back out.

Three layouts of canonical episodes, chosen by the path:

* ``*.parquet``: one parquet file (the canonical features are kept in its metadata);
* ``*.jsonl``: one JSON object per line;
* anything else: a folder in Hugging Face hub layout, one parquet file per config and
  split under ``<config>/<split>-00000-of-00001.parquet`` and a ``README.md`` dataset card
  whose YAML header lists the configs, so that :func:`accordkit.load` (and
  ``datasets.load_dataset``) read it back exactly, locally or once pushed to the hub.

Writing is deterministic: the same dataset gives the same bytes.

``format="eee"`` writes Every Eval Ever instead (scored, with intervals; see
:mod:`accordkit.interchange.eee` and docs/formats.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ._internal.arrow import arrow_table
from .schema import EPISODE_FEATURES, SCHEMA_VERSION

__all__ = ["save", "push_to_hub", "dataset_card"]

DEFAULT_CONFIG = "default"
DEFAULT_SPLIT = "train"


def _groups(table: pa.Table) -> dict[tuple[str, str], pa.Table]:
    configs = pc.fill_null(table.column("config"), DEFAULT_CONFIG).to_pylist()
    splits = pc.fill_null(table.column("split"), DEFAULT_SPLIT).to_pylist()
    rows: dict[tuple[str, str], list[int]] = {}
    for i, key in enumerate(zip(configs, splits, strict=True)):
        rows.setdefault(key, []).append(i)
    return {key: table.take(pa.array(idx)) for key, idx in sorted(rows.items())}


def dataset_card(groups: Mapping[tuple[str, str], int], *, title: str,
                 description: str = "") -> str:
    """Build a README.md dataset card whose YAML header declares configs and splits.

    Parameters
    ----------
    groups : mapping
        ``(config, split) -> number of rows``.
    title, description : str
        Shown in the card body.
    """
    lines = ["---", "configs:"]
    configs: dict[str, list[str]] = {}
    for config, split in groups:
        configs.setdefault(config, []).append(split)
    for config, splits in configs.items():
        lines += [f"- config_name: {config}", "  data_files:"]
        for split in splits:
            lines += [f"  - split: {split}", f"    path: {config}/{split}-*.parquet"]
    lines += ["tags:", "- accordkit", f"- {SCHEMA_VERSION.replace('/', '-')}", "---", "",
              f"# {title}", ""]
    if description:
        lines += [description.strip(), ""]
    lines += [f"Episodes in the accordkit canonical schema (`{SCHEMA_VERSION}`, see "
              "`docs/schema.md` in the accordkit repository). Load with "
              "`accordkit.load(<this folder or hub id>)`.", "",
              "| config | split | episodes |", "|---|---|---|"]
    lines += [f"| {c} | {s} | {n} |" for (c, s), n in groups.items()]
    return "\n".join(lines) + "\n"


def _write_parquet(table: pa.Table, path: Path) -> None:
    # Keep the canonical features in the file so that readers get exact types back.
    schema = EPISODE_FEATURES.arrow_schema
    meta = {b"huggingface": json.dumps({"info": {"features": EPISODE_FEATURES.to_dict()}})
            .encode()}
    table = table.cast(schema).replace_schema_metadata(meta)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd", row_group_size=10_000)


#: The formats :func:`save` writes: accordkit's canonical episodes, or Every Eval Ever.
FORMATS = ("canonical", "eee")


def save(ds: datasets.Dataset, path: str | Path, *, title: str | None = None,
         description: str = "", format: str = "canonical", **eee_options: Any) -> Path:
    """Write canonical episodes to a parquet file, a JSONL file or a hub-layout folder, or
    as Every Eval Ever records.

    Parameters
    ----------
    ds : datasets.Dataset
        Canonical episodes.
    path : str or Path
        ``*.parquet``, ``*.jsonl``, or a folder (created; existing parquet files of the
        same configs are replaced).
    title, description : str, optional
        Dataset card text for the folder layout.
    format : {"canonical", "eee"}
        ``"eee"``: score the episodes and write one Every Eval Ever aggregate record per
        configuration, with its ``_samples.jsonl`` sidecar, under the folder ``path`` in
        the EEE datastore layout (``data/<collection>/<developer>/<model>/``); see
        docs/formats.md.
    **eee_options
        With ``format="eee"``: ``timestamp``, ``organization``, ``relationship``,
        ``verdicts``, ``method``, ``confidence``, ``n_resamples``, ``seed``
        (:func:`accordkit.interchange.eee.eee_records`).

    Returns
    -------
    Path
        What was written (the folder, for ``format="eee"``).

    Examples
    --------
    >>> import accordkit as ak
    >>> ak.save(ak.load("data/sample/accord"), "/tmp/accord.parquet")   # doctest: +SKIP
    """
    path = Path(path)
    if format not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}, got {format!r}")
    if format == "eee":
        from .interchange.eee import write_eee

        if path.suffix in (".parquet", ".jsonl", ".json"):
            raise ValueError(f"format='eee' writes a folder (the EEE datastore layout), "
                             f"not a {path.suffix} file: give a folder path")
        write_eee(ds, path, **eee_options)
        return path
    if eee_options:
        raise TypeError(f"save() got options of format='eee' only: {sorted(eee_options)}")
    table = arrow_table(ds)
    if path.suffix == ".parquet":
        _write_parquet(table, path)
        return path
    if path.suffix == ".jsonl":
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as fh:
            for row in table.to_pylist():
                fh.write(json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n")
        return path
    groups = _groups(table)
    path.mkdir(parents=True, exist_ok=True)
    for (config, split), part in groups.items():
        for old in (path / config).glob(f"{split}-*.parquet"):
            old.unlink()
        _write_parquet(part, path / config / f"{split}-00000-of-00001.parquet")
    counts = {key: part.num_rows for key, part in groups.items()}
    card = dataset_card(counts, title=title or path.name, description=description)
    (path / "README.md").write_text(card, encoding="utf-8")
    return path


def push_to_hub(ds: datasets.Dataset, repo_id: str, *, private: bool = True,
                revision: str | None = None, token: str | None = None,
                **kwargs: Any) -> list[Any]:
    """Push canonical episodes to the Hugging Face hub, one hub config per ``config`` value.

    A thin wrapper over :meth:`datasets.Dataset.push_to_hub`; the token comes from the
    environment (``HF_TOKEN``) or the argument and is never stored by accordkit.

    Returns
    -------
    list
        The commit info of each pushed config.
    """
    table = arrow_table(ds)
    out = []
    for (config, split), part in _groups(table).items():
        sub = datasets.Dataset(part.cast(EPISODE_FEATURES.arrow_schema),
                               info=datasets.DatasetInfo(features=EPISODE_FEATURES))
        out.append(sub.push_to_hub(repo_id, config_name=config, split=split, private=private,
                                   revision=revision, token=token, **kwargs))
    return out
