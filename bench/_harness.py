"""A real ``kyma serve`` for benchmarks, a keep-alive HTTP client to feed it, and timing
helpers the benchmarks share."""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any


class Server:
    def __init__(self, **env: str) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="kyma-bench-", dir="/tmp")) / "home"
        env = {
            **os.environ,
            "KYMA_HOME": str(self.home),
            "KYMA_HTTP_PORT": "0",
            "KYMA_FLIGHT_PORT": "0",
            "KYMA_OTLP_GRPC_PORT": "0",
            "KYMA_OTLP_HTTP_PORT": "0",
            "KYMA_PG_PORT": "0",
            **env,
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kyma", "serve"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(
            target=lambda: [lines.put(x) for x in self.proc.stdout], daemon=True
        ).start()
        deadline, seen = time.monotonic() + 120, []
        while time.monotonic() < deadline:
            seen.append(lines.get(timeout=120))
            if "object store" in seen[-1]:
                break
        match = re.search(r"http://([\d.]+):(\d+)", "".join(seen))
        assert match, "".join(seen)
        self.host, self.port = match.group(1), int(match.group(2))
        flight = re.search(r"Flight SQL\s+(grpc://\S+)", "".join(seen))
        self.flight_url = flight.group(1) if flight else None
        otlp = re.search(r"OTLP/gRPC\s+(grpc://\S+)", "".join(seen))
        self.otlp_grpc_url = otlp.group(1) if otlp else None

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=600)

    def sql(self, text: str, conn: http.client.HTTPConnection | None = None) -> dict:
        conn = conn or self.connection()
        conn.request(
            "POST", "/v1/query", json.dumps({"sql": text}), {"Content-Type": "application/json"}
        )
        answer = conn.getresponse()
        body = json.loads(answer.read())
        assert answer.status == 200, body
        return body

    def ingest(self, table: str, bodies, clients: int = 2) -> int:
        """Post every body (one request each) over ``clients`` connections; rows ingested."""
        local = threading.local()

        def send(body: bytes) -> int:
            if not hasattr(local, "conn"):
                local.conn = self.connection()
            local.conn.request("POST", f"/v1/ingest/{table}", body)
            answer = local.conn.getresponse()
            ack = json.loads(answer.read())
            assert answer.status == 200, ack
            return ack["rows"]

        with ThreadPoolExecutor(clients) as pool:
            return sum(pool.map(send, bodies))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=120)


def seconds(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def wait_for(what: str, ready: Callable[[], bool], timeout: float, every: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not after {timeout:.0f} s")
        time.sleep(every)


def percentile(values: list[float], p: float) -> float:
    """Nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))]
