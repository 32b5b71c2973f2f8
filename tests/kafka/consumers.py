"""``kyma kafka-consume`` worker processes on a test's catalog and object store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path


class ConsumeWorker:
    """One ``kyma kafka-consume --source NAME`` process; its output goes to a file."""

    def __init__(
        self, source: str, catalog_url: str, objects: Path, *, crash_at: str | None = None
    ) -> None:
        home = Path(tempfile.mkdtemp(prefix="kyma-consume-", dir="/tmp"))
        self.log_path = home / "worker.log"
        env = {
            **os.environ,
            "KYMA_HOME": str(home),
            "KYMA_CATALOG_URL": catalog_url,
            "KYMA_OBJECT_STORE": f"file://{objects.absolute()}",
        }
        env.pop("KYMA_CRASH_AT", None)
        if crash_at:
            env["KYMA_CRASH_AT"] = crash_at
        with self.log_path.open("w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "kyma", "kafka-consume", "--source", source],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    @property
    def output(self) -> str:
        return self.log_path.read_text()

    def kill(self) -> None:
        """kill -9, and wait for the process to be gone."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def wait_for_own_death(self, timeout: float) -> int:
        """The exit code of a worker told to crash at a crash point (-9 when it did)."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            message = f"the worker did not crash in {timeout}s:\n{self.output}"
            raise AssertionError(message) from None

    def stop(self) -> None:
        """SIGTERM, as an operator would; kill -9 only if it does not stop in time."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
                raise AssertionError(f"the worker ignored SIGTERM:\n{self.output}") from None

    def wait_for_output(self, text: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.output:
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"no {text!r} from the worker:\n{self.output}")
