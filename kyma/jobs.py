"""Background jobs of a kyma process: bulk loads on Spark, each with its progress.

``POST /v1/jobs/load`` starts one and answers at once; ``GET /v1/jobs/<id>`` follows it.
Jobs live in the process that runs them (a restart forgets finished ones; a load that was
running left nothing visible, and running it again starts from scratch).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kyma.engine.errors import ConfigError, KymaError, NotFoundError
from kyma.ingest.load import (
    LoadIdentity,
    LoadProgress,
    LoadRequest,
    StoreConfig,
    run_load,
    spark_session,
)
from kyma.ingest.write_path import IngestAck, WritePath
from kyma.settings import Settings

log = logging.getLogger("kyma.jobs")


@dataclass
class Job:
    job_id: str
    kind: str
    request: dict[str, Any]
    state: str = "running"  # running, succeeded, failed
    progress: LoadProgress = field(default_factory=LoadProgress)
    result: dict[str, Any] | None = None
    error: str | None = None
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.job_id,
            "kind": self.kind,
            "request": self.request,
            "state": self.state,
            "progress": self.progress.to_json(),
            "result": self.result,
            "error": self.error,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
        }


def store_config(settings: Settings, url: str) -> StoreConfig:
    """A picklable description of the store at ``url``, with the settings' S3 options."""
    return StoreConfig(
        url=url,
        cache_dir=str(settings.resolved_cache_dir.absolute()),
        endpoint_url=settings.s3_endpoint_url,
        region=settings.s3_region,
        access_key_id=settings.s3_access_key_id,
        secret_access_key=settings.s3_secret_access_key,
    )


def parse_load(body: Any) -> LoadRequest:
    """A LoadRequest from ``{"table", "source", "format"?, "schema_evolve"?}``."""
    if not isinstance(body, dict):
        raise ConfigError("body: expected a JSON object with table and source")
    unknown = sorted(set(body) - {"table", "source", "format", "schema_evolve"})
    if unknown:
        raise ConfigError(
            f"{unknown[0]}: unknown field; expected table, source, format, schema_evolve"
        )
    for name in ("table", "source"):
        if not isinstance(body.get(name), str) or not body[name]:
            raise ConfigError(f"{name}: expected a non-empty string, got {body.get(name)!r}")
    fmt = body.get("format")
    if fmt is not None and fmt not in ("ndjson", "csv", "parquet"):
        raise ConfigError(f"format: expected ndjson, csv or parquet, got {fmt!r}")
    evolve = body.get("schema_evolve", True)
    if not isinstance(evolve, bool):
        raise ConfigError(f"schema_evolve: expected true or false, got {evolve!r}")
    return LoadRequest(body["table"], body["source"], fmt, evolve)


class JobRegistry:
    def __init__(self, settings: Settings, store_url: str, write_path: WritePath) -> None:
        self.settings = settings
        self.write_path = write_path
        self.store = store_config(settings, store_url)
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def load(
        self,
        request: LoadRequest,
        job: Job | None = None,
        identity: LoadIdentity | None = None,
        follow: Callable[[LoadProgress], None] = lambda _: None,
    ) -> Job:
        """Run a bulk load here, to the end (the CLI's way); its job is also listed."""
        job = job or self._new("load", request)

        def on_progress(progress: LoadProgress) -> None:
            job.progress = progress
            follow(progress)

        try:
            ack = run_load(
                spark_session(
                    self.settings.spark_master, self.settings.home.absolute() / "spark.log"
                ),
                self.write_path,
                self.store,
                request,
                block_rows=self.settings.block_rows,
                extent_format=self.settings.extent_format,
                source_bucket=lambda url: store_config(self.settings, url),
                on_progress=on_progress,
                identity=identity,
            )
        except Exception as e:  # the job says why, whatever it was
            reason = str(e) if isinstance(e, KymaError) else f"{type(e).__name__}: {e}"
            job.state, job.error, job.finished_at = "failed", reason, time.time()
            job.progress.phase = "failed"
            raise
        job.state, job.result, job.finished_at = "succeeded", ack.to_json(), time.time()
        return job

    def load_file(
        self, request: LoadRequest, identity: LoadIdentity, on_rows: Callable[[int], None]
    ) -> IngestAck:
        """A file-drop source's large file as a Spark load (the ``BulkLoad`` seam)."""
        job = self.load(request, None, identity, lambda p: on_rows(p.rows_done))
        return IngestAck(**job.result)  # type: ignore[arg-type]  # set when a load succeeds

    def submit_load(self, request: LoadRequest) -> Job:
        """Start a bulk load in the background; its job at once."""
        job = self._new("load", request)

        def run() -> None:
            try:
                self.load(request, job)
            except KymaError:
                pass  # the input's fault: recorded in the job
            except Exception:
                log.exception("job %s failed", job.job_id)

        threading.Thread(target=run, daemon=True, name=f"job-{job.job_id}").start()
        return job

    @staticmethod
    def spark_available() -> bool:
        try:
            import pyspark  # noqa: F401
        except ImportError:
            return False
        return True

    def get(self, job_id: str) -> Job:
        job = self._jobs.get(job_id)
        if job is None:
            raise NotFoundError(f"job {job_id!r} does not exist")
        return job

    def list(self) -> list[Job]:
        return sorted(self._jobs.values(), key=lambda j: j.started_at)

    def _new(self, kind: str, request: LoadRequest) -> Job:
        job = Job(uuid.uuid4().hex[:12], kind, dict(request.__dict__))
        with self._lock:
            self._jobs[job.job_id] = job
        return job
