"""A real ``kyma serve`` process for end-to-end tests, talking HTTP on loopback."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Serve:
    """One ``kyma serve`` process and the URL it printed."""

    def __init__(self, home: Path, **env: str) -> None:
        self.home = home
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kyma", "serve"],
            env={
                **os.environ,
                "KYMA_HOME": str(home),
                "KYMA_HTTP_PORT": "0",
                "KYMA_FLIGHT_PORT": "0",
                "KYMA_OTLP_GRPC_PORT": "0",
                "KYMA_OTLP_HTTP_PORT": "0",
                "KYMA_PG_PORT": "0",
                **env,
            },
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.output: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        self._pumping = threading.Thread(target=self._pump, daemon=True)
        self._pumping.start()
        self._wait_for(r"object store  ")  # the last line of the start-up banner
        self.url = re.search(r"HTTP API\s+(https?://\S+)", "".join(self.output)).group(1)
        flight = re.search(r"Flight SQL\s+(grpc(?:\+tls)?://\S+)", "".join(self.output))
        self.flight_url = flight.group(1) if flight else None
        pg = re.search(r"Postgres\s+postgresql://[^:\s]+:(\d+)", "".join(self.output))
        self.pg_port = int(pg.group(1)) if pg else None
        otlp_grpc = re.search(r"OTLP/gRPC\s+(grpc(?:\+tls)?://\S+)", "".join(self.output))
        self.otlp_grpc_url = otlp_grpc.group(1) if otlp_grpc else None
        otlp_http = re.search(r"OTLP/HTTP\s+(https?://\S+)", "".join(self.output))
        self.otlp_http_url = otlp_http.group(1) if otlp_http else None

    def _wait_for(self, pattern: str, timeout: float = 90) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._lines.get(timeout=0.5)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            self.output.append(line)
            if match := re.search(pattern, line):
                return match
        raise AssertionError(f"no {pattern!r} in kyma serve's output:\n{''.join(self.output)}")

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        with self.proc.stdout:
            for line in self.proc.stdout:
                self._lines.put(line)

    def printed(self) -> str:
        """Everything the server has printed so far."""
        while not self._lines.empty():
            self.output.append(self._lines.get())
        return "".join(self.output)

    def sql(self, text: str) -> dict:
        request = urllib.request.Request(
            f"{self.url}/v1/query",
            data=json.dumps({"sql": text}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.load(answer)

    def post(self, path: str, body: dict, method: str = "POST") -> tuple[int, dict]:
        """POST (or ``method``) JSON; the status and JSON answer, errors included."""
        request = urllib.request.Request(
            f"{self.url}{path}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method=method,
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, json.load(answer)
        except urllib.error.HTTPError as e:
            with e:
                return e.code, json.load(e)

    def get(self, path: str) -> tuple[int, dict]:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=30) as answer:
            return answer.status, json.load(answer)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=60)
        self._pumping.join(timeout=10)
        while not self._lines.empty():
            self.output.append(self._lines.get())
        return code


def postmaster_pid(home: Path) -> int | None:
    """The pid of the embedded Postgres of the serve on ``home``, if it is running."""
    pid_file = home / "catalog" / "postmaster.pid"
    if not pid_file.exists():
        return None
    pid = int(pid_file.read_text().split()[0])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    return pid


def request(
    url: str, body: bytes | None = None, headers: dict[str, str] | None = None, timeout: float = 60
) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of one request; errors are answers too."""
    req = urllib.request.Request(url, data=body, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, dict(e.headers), e.read()


def query(serve: Serve, sql: str, timeout: float = 60) -> tuple[int, dict[str, str], dict]:
    status, headers, body = request(
        f"{serve.url}/v1/query",
        json.dumps({"sql": sql}).encode(),
        {"Content-Type": "application/json"},
        timeout,
    )
    return status, headers, json.loads(body)


def kyma(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``kyma ARGS`` against the catalog of the serve on ``home``."""
    return subprocess.run(
        [sys.executable, "-m", "kyma", *args],
        env={**os.environ, "KYMA_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
