"""The ObjectStore contract, on the local folder and on S3 (moto's server)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kyma.engine.errors import ConfigError, NotFoundError
from kyma.engine.storage import ObjectStore, open_object_store
from kyma.engine.storage.local import LocalStore
from kyma.engine.storage.s3 import S3Store


def test_put_read_list_delete(store: ObjectStore, tmp_path: Path) -> None:
    store.put_bytes("tables/1/a.tlm", b"0123456789")
    source = tmp_path / "b.part"
    source.write_bytes(b"hello")
    store.put_file("tables/2/b.tlm", source)
    assert store.size("tables/1/a.tlm") == 10
    assert store.get_range("tables/1/a.tlm", 3, 4) == b"3456"
    assert store.local_path("tables/2/b.tlm").read_bytes() == b"hello"
    assert sorted(o.key for o in store.list("tables/")) == ["tables/1/a.tlm", "tables/2/b.tlm"]
    assert [o.size for o in store.list("tables/1/")] == [10]
    store.delete("tables/1/a.tlm")
    store.delete("tables/1/a.tlm")
    assert [o.key for o in store.list("tables/")] == ["tables/2/b.tlm"]


def test_open_input_reads_byte_ranges(store: ObjectStore) -> None:
    store.put_bytes("tables/1/a.parquet", b"0123456789")
    with store.open_input("tables/1/a.parquet") as file:
        assert file.size() == 10
        assert file.read_at(4, 3) == b"3456"
        file.seek(-2, 2)
        assert file.read() == b"89"
        assert file.read(5) == b""
    with pytest.raises(NotFoundError, match="'nope' not found"):
        store.open_input("nope")


def test_missing_objects_raise_not_found(store: ObjectStore) -> None:
    for call in (
        lambda: store.size("nope"),
        lambda: store.get_range("nope", 0, 1),
        lambda: store.local_path("nope"),
    ):
        with pytest.raises(NotFoundError, match="'nope' not found"):
            call()


def test_remote_reads_go_through_the_cache(s3_store: S3Store, tmp_path: Path) -> None:
    store = s3_store
    store.put_bytes("k.tlm", b"payload")
    first = store.local_path("k.tlm")
    assert first.is_relative_to(tmp_path / "cache")
    store.delete("k.tlm")
    assert store.local_path("k.tlm") == first  # immutable objects: a hit needs no request
    assert first.read_bytes() == b"payload"


@pytest.mark.parametrize("key", ["../outside", "/etc/passwd", "a/../../b", "a//b", "./a", "a/"])
def test_local_keys_cannot_escape_the_root(tmp_path: Path, key: str) -> None:
    store = LocalStore(tmp_path / "objects")
    with pytest.raises(NotFoundError, match="escapes"):
        store.put_bytes(key, b"x")
    assert not (tmp_path / "outside").exists()
    assert list(store.scratch_dir().iterdir()) == []


def test_open_object_store_by_url(tmp_path: Path) -> None:
    assert isinstance(open_object_store(f"file://{tmp_path}", cache_dir=tmp_path), LocalStore)
    s3 = open_object_store("s3://bucket/some/prefix", cache_dir=tmp_path)
    assert isinstance(s3, S3Store)
    assert (s3.bucket, s3.prefix) == ("bucket", "some/prefix/")
    with pytest.raises(ConfigError, match="expected s3://"):
        open_object_store("gs://bucket", cache_dir=tmp_path)


def test_objects_put_unsynced_cost_one_fsync_each_and_one_per_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write path's extents: each file fsynced as it is stored, each folder once when
    they are synced together (``put_file`` alone fsyncs both, every time)."""
    store = LocalStore(tmp_path / "objects")
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    keys = [f"tables/{t}/{n}.parquet" for t in (1, 2) for n in range(3)]
    for key in keys:
        source = tmp_path / "staged.part"
        source.write_bytes(key.encode())
        store.put_unsynced(key, source)
    assert len(synced) == 6
    store.sync(keys)
    assert len(synced) == 6 + 2
    assert [store.local_path(k).read_bytes() for k in keys] == [k.encode() for k in keys]
