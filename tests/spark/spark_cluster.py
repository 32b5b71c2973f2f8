"""A Spark standalone cluster on loopback: a master and workers from pyspark's own
distribution (``bin/spark-class``), each a process of its own, with its log in a file.

Workers run 1 core and 512 MiB; drivers are told to ask for executors that fit
(``submit_args``). ``kill_worker`` kills a worker's whole process group: the worker, the
executor JVM it launched and that executor's Python workers.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyspark
from loopback import wait_for_port
from serve_helpers import free_port

SPARK_HOME = Path(pyspark.__file__).parent
WORKER_MEMORY = "512m"
START_SECONDS = 90
DRIVER_ENV = {  # read when a driver's JVM starts: executors that fit the workers, on loopback
    "SPARK_LOCAL_IP": "127.0.0.1",
    "PYSPARK_SUBMIT_ARGS": (
        f"--conf spark.executor.memory={WORKER_MEMORY} --conf spark.executor.cores=1"
        " --conf spark.driver.host=127.0.0.1 --conf spark.driver.bindAddress=127.0.0.1"
        " pyspark-shell"
    ),
}


@dataclass
class Worker:
    proc: subprocess.Popen
    log: Path


@dataclass
class Cluster:
    master: str
    home: Path
    master_proc: subprocess.Popen
    workers: list[Worker] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        """What a kyma process needs to run its jobs here: KYMA_SPARK_MASTER and DRIVER_ENV."""
        return {"KYMA_SPARK_MASTER": self.master, **DRIVER_ENV}

    def _executor_logs(self, index: int) -> str:
        logs = sorted((self.home / f"worker-{index}-work").glob("app-*/*/stderr"))
        return "".join(log.read_text() for log in logs)

    def tasks_run(self, index: int) -> int:
        """Tasks the executors of worker ``index`` have started (their logs say each)."""
        return self._executor_logs(index).count("Running task")

    def busy(self, index: int) -> bool:
        """Whether an executor of worker ``index`` is running a task right now."""
        text = self._executor_logs(index)
        return text.count("Running task") > text.count("Finished task")

    def retried(self, index: int) -> list[str]:
        """The retried task attempts (``task 3.1``) the executors of worker ``index`` ran."""
        return re.findall(r"Running task (\d+\.[1-9]) ", self._executor_logs(index))

    def kill_worker(self, index: int) -> None:
        worker = self.workers[index]
        os.killpg(worker.proc.pid, signal.SIGKILL)
        worker.proc.wait(timeout=30)

    def stop(self) -> None:
        for proc in [w.proc for w in self.workers] + [self.master_proc]:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in [w.proc for w in self.workers] + [self.master_proc]:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)


def _spawn(home: Path, name: str, *args: str) -> tuple[subprocess.Popen, Path]:
    log = home / f"{name}.log"
    env = {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(home),
        "SPARK_WORKER_DIR": str(home / f"{name}-work"),
    }
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its executors die with it (kill_worker)
        )
    return proc, log


def _wait_for(log: Path, text: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_SECONDS
    while text not in log.read_text():
        assert proc.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, f"no {text!r} in {log}: {log.read_text()[-3000:]}"
        time.sleep(0.2)


def start_cluster(home: Path, workers: int = 2) -> Cluster:
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    master, log = _spawn(
        home,
        "master",
        "org.apache.spark.deploy.master.Master",
        *("--host", "127.0.0.1", "--port", str(port), "--webui-port", str(free_port())),
    )
    cluster = Cluster(f"spark://127.0.0.1:{port}", home, master)
    try:
        wait_for_port(port, START_SECONDS)
        for i in range(workers):
            proc, wlog = _spawn(
                home,
                f"worker-{i}",
                "org.apache.spark.deploy.worker.Worker",
                *("--host", "127.0.0.1", "--cores", "1", "--memory", WORKER_MEMORY),
                *("--webui-port", str(free_port()), cluster.master),
            )
            cluster.workers.append(Worker(proc, wlog))
        for worker in cluster.workers:
            _wait_for(worker.log, "Successfully registered with master", worker.proc)
    except BaseException:
        cluster.stop()
        raise
    return cluster
