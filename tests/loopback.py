"""Helpers for tests that start real parts on loopback, importable by any test module
(a ``conftest`` is not: pytest loads several, and the name ``conftest`` means whichever
came first)."""

from __future__ import annotations

import socket
import tempfile
import time
import uuid
from pathlib import Path

import boto3

from kyma.engine.storage.s3 import S3Store


def wait_for_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


def server_tmpdir(prefix: str) -> Path:
    """A temp folder outside /tmp/pytest-of-root (mode 700), reachable by the postgres user."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))


S3_CREDENTIALS = {"access_key_id": "testing", "secret_access_key": "testing"}


def make_s3_store(endpoint: str, cache_dir: Path) -> S3Store:
    bucket = f"kyma-{uuid.uuid4().hex[:10]}"
    boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ).create_bucket(Bucket=bucket)
    return S3Store(
        f"s3://{bucket}/data", cache_dir=cache_dir, endpoint_url=endpoint, **S3_CREDENTIALS
    )
