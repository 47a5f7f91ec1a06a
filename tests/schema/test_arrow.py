"""accordkit.schema.arrow: the canonical schema and the dataset wrapper every load returns."""

from __future__ import annotations

import pickle

import datasets
import pyarrow as pa
import pytest

from accordkit.schema import EPISODE_FEATURES
from accordkit.schema import arrow as _arrow
from accordkit.schema.arrow import canonical_schema, episode_dataset
from accordkit.testing import accord_episode, episode_table


def _table(n: int = 3) -> pa.Table:
    return episode_table(*(accord_episode(f"e{i}", scenario_id=f"s{i % 2}") for i in range(n)))


def _by_constructor(table: pa.Table) -> datasets.Dataset:
    return datasets.Dataset(table, info=datasets.DatasetInfo(features=EPISODE_FEATURES),
                            fingerprint="f" * 16)


def test_canonical_schema_is_the_features_schema_with_its_metadata():
    assert canonical_schema().equals(EPISODE_FEATURES.arrow_schema, check_metadata=True)


def test_the_installed_datasets_release_is_wrapped_directly():
    # a new release of datasets in the lock must be checked (the tests below) and added to
    # _STATE_CHECKED, or every load pays the constructor again
    assert _arrow._state_checked(datasets.__version__)


def test_direct_wrap_has_the_state_the_constructor_gives():
    table = _table()
    fast, slow = episode_dataset(table), _by_constructor(table)
    assert set(vars(fast)) == set(vars(slow))
    for name in vars(slow):
        if name == "_fingerprint":
            continue
        if name == "_data":
            assert fast._data.table.equals(slow._data.table, check_metadata=True)
        else:
            assert getattr(fast, name) == getattr(slow, name), name
    assert isinstance(fast._fingerprint, str) and fast._fingerprint != episode_dataset(
        table)._fingerprint


def test_direct_wrap_behaves_like_a_dataset():
    table = _table(4)
    ds, ref = episode_dataset(table), _by_constructor(table)
    assert ds.features == EPISODE_FEATURES and ds.features is not EPISODE_FEATURES
    assert ds.to_pandas().equals(ref.to_pandas())
    assert ds.select([2, 0])["episode_id"] == ["e2", "e0"]
    assert ds.filter(lambda r: r["scenario_id"] == "s1")["episode_id"] == ["e1", "e3"]
    back = pickle.loads(pickle.dumps(ds))
    assert back["episode_id"] == ds["episode_id"] and back.features == ds.features
    ds.info.features.pop("episode_id")  # the features are the dataset's own copy
    assert "episode_id" in EPISODE_FEATURES


def test_other_tables_and_releases_go_through_the_constructor(monkeypatch):
    table = _table()
    monkeypatch.setattr(_arrow, "_STATE_CHECKED", frozenset())
    ds = episode_dataset(table)
    assert ds.features == EPISODE_FEATURES and ds["episode_id"] == ["e0", "e1", "e2"]
    # a table that is not canonical is never given the canonical state
    monkeypatch.undo()
    with pytest.raises(ValueError):
        episode_dataset(table.drop_columns(["episode_id"]))


def test_records_table_is_the_table_from_pylist_builds():
    from collections import OrderedDict

    records = [accord_episode(f"e{i}") for i in range(3)]
    del records[1]["persona"]           # a missing key is null
    records[2] = OrderedDict(records[2], unknown="left out")  # a dict subclass, an extra key
    built = _arrow.records_table(records)
    expected = pa.Table.from_pylist(records, schema=canonical_schema())
    assert built.equals(expected)
    assert built.schema.equals(expected.schema, check_metadata=True)
    assert _arrow.records_table([]).equals(canonical_schema().empty_table())


@pytest.mark.parametrize("bad", [None, ["not", "a", "dict"]])
def test_records_table_refuses_what_is_not_a_record(bad):
    with pytest.raises(TypeError):
        _arrow.records_table([accord_episode("e0"), bad])


def test_records_table_raises_for_a_value_that_does_not_fit():
    rec = accord_episode("e0")
    rec["rollout"] = "three"
    with pytest.raises((pa.ArrowException, TypeError, ValueError)):
        _arrow.records_table([rec])
