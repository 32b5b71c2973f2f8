"""An ObjectStore on any S3-compatible service, through boto3."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import botocore.exceptions
from botocore.config import Config

from kyma.engine.errors import NotFoundError, ObjectStoreError
from kyma.engine.storage import ObjectInfo, ObjectStore
from kyma.engine.storage.cache import ObjectCache


class S3Store(ObjectStore):
    def __init__(
        self,
        url: str,
        *,
        cache_dir: Path,
        endpoint_url: str | None = None,
        region: str = "us-east-1",
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
    ) -> None:
        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.url = url
        self._client: Any = boto3.client(
            "s3",
            endpoint_url=endpoint_url,
            region_name=region,
            aws_access_key_id=access_key_id,
            aws_secret_access_key=secret_access_key,
            config=Config(retries={"max_attempts": 5, "mode": "standard"}),
        )
        self._cache = ObjectCache(cache_dir)

    def _key(self, key: str) -> str:
        return self.prefix + key

    def put_file(self, key: str, source: Path) -> None:
        try:
            self._client.upload_file(str(source), self.bucket, self._key(key))
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as e:
            raise ObjectStoreError(f"upload of {key!r} to {self.url} failed: {e}") from e
        source.unlink(missing_ok=True)

    def put_bytes(self, key: str, data: bytes) -> None:
        self._call(key, self._client.put_object, Bucket=self.bucket, Key=self._key(key), Body=data)

    def size(self, key: str) -> int:
        head = self._call(key, self._client.head_object, Bucket=self.bucket, Key=self._key(key))
        return int(head["ContentLength"])

    def get_range(self, key: str, offset: int, length: int) -> bytes:
        if length <= 0:
            return b""
        answer = self._call(
            key,
            self._client.get_object,
            Bucket=self.bucket,
            Key=self._key(key),
            Range=f"bytes={offset}-{offset + length - 1}",
        )
        return bytes(answer["Body"].read())

    def local_path(self, key: str) -> Path:
        def fetch(target: Path) -> None:
            self._call(key, self._client.download_file, self.bucket, self._key(key), str(target))

        return self._cache.path_for(self.url, key, fetch)

    def delete(self, key: str) -> None:
        self._call(key, self._client.delete_object, Bucket=self.bucket, Key=self._key(key))

    def list(self, prefix: str = "") -> Iterator[ObjectInfo]:
        pages = self._client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self._key(prefix)
        )
        try:
            for page in pages:
                for item in page.get("Contents", []):
                    key = item["Key"][len(self.prefix) :]
                    yield ObjectInfo(key, int(item["Size"]), item["LastModified"])
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as e:
            raise ObjectStoreError(f"listing {prefix!r} in {self.url} failed: {e}") from e

    def _call(self, key: str, method: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except botocore.exceptions.ClientError as e:
            code = str(e.response.get("Error", {}).get("Code", ""))
            if code in {"404", "NoSuchKey", "NotFound"}:
                raise NotFoundError(f"object {key!r} not found in {self.url}") from None
            raise ObjectStoreError(f"{method.__name__} of {key!r} in {self.url}: {e}") from e
        except botocore.exceptions.BotoCoreError as e:
            raise ObjectStoreError(f"{method.__name__} of {key!r} in {self.url}: {e}") from e
