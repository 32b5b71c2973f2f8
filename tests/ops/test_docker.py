"""docker/: the compose file parses and wires the stack, and the image's exact entry command,
run outside Docker with the image's ENV and the compose file's environment, serves every
published port with auth on and a printed first token."""

from __future__ import annotations

import json
import re
import shlex
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import boto3
import grpc
import psycopg
import pytest
import yaml
from adbc_driver_flightsql import DatabaseOptions
from adbc_driver_flightsql.dbapi import connect
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from serve_helpers import Serve

from kyma.auth import check_listen
from kyma.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
# The setting that moves each listener, by its default port (the ports the image exposes).
PORT_SETTINGS = {
    8080: "KYMA_HTTP_PORT",
    8815: "KYMA_FLIGHT_PORT",
    4317: "KYMA_OTLP_GRPC_PORT",
    4318: "KYMA_OTLP_HTTP_PORT",
    5433: "KYMA_PG_PORT",
}


def dockerfile() -> dict[str, list[str]]:
    """Each instruction's arguments (continuation lines joined), by instruction."""
    text = re.sub(r"\\\n", " ", (DOCKER / "Dockerfile").read_text())
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            found.setdefault(word.upper(), []).append(rest.strip())
    return found


def image_env() -> dict[str, str]:
    return dict(pair.split("=", 1) for env in dockerfile()["ENV"] for pair in shlex.split(env))


def compose() -> dict:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


def published(service: dict) -> dict[int, str]:
    """Container port → the host address it is published on."""
    ports = {}
    for spec in service["ports"]:
        host, host_port, container = spec.rsplit(":", 2)
        assert host_port == container, spec
        ports[int(container)] = host
    return ports


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_compose_file_parses_and_wires_the_stack() -> None:
    services = compose()["services"]
    assert set(services) == {"catalog", "objects", "make-bucket", "kafka", "kyma"}
    kyma = services["kyma"]
    for name, need in kyma["depends_on"].items():
        if need["condition"] == "service_healthy":
            assert "healthcheck" in services[name], name
    assert {n for n, s in services.items() if "healthcheck" in s} == {"catalog", "objects", "kafka"}
    assert "HEALTHCHECK" in dockerfile()  # kyma's own: GET /readyz
    ports = published(kyma)
    exposed = {int(p) for p in dockerfile()["EXPOSE"][0].split()}
    assert set(ports) == exposed == set(PORT_SETTINGS)
    assert set(ports.values()) == {"127.0.0.1"}  # published on loopback only
    # Every Kafka example in the docs names the compose stack's broker.
    advertised = services["kafka"]["environment"]["KAFKA_ADVERTISED_LISTENERS"]
    broker = advertised.removeprefix("PLAINTEXT://")
    docs = "".join(p.read_text() for p in sorted((ROOT / "docs").rglob("*.md")))
    examples = re.findall(r"bootstrap_servers[\s\"=:']+([\w.-]+:\d+)", docs)
    assert examples and set(examples) == {broker}, examples
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", ".git", "tests"} <= set(ignored)


def test_image_env_listens_beyond_loopback_only_with_auth() -> None:
    env = image_env()
    assert env["KYMA_HTTP_HOST"] == "0.0.0.0" and env["KYMA_AUTH"] == "required"
    settings = Settings(http_host=env["KYMA_HTTP_HOST"], auth=env["KYMA_AUTH"])
    check_listen(settings)  # raised ConfigError while the image had auth off
    assert Settings().http_port == 8080 and Settings().flight_port == 8815
    assert (Settings().otlp_grpc_port, Settings().otlp_http_port) == (4317, 4318)


@pytest.fixture
def stack_env(catalog_url: str, s3_endpoint: str, tmp_path: Path) -> dict[str, str]:
    """The compose file's environment for kyma, its service names pointed at this test's
    Postgres and S3 (moto), and its listeners on free loopback ports."""
    env = {k: str(v) for k, v in compose()["services"]["kyma"]["environment"].items()}
    assert urlsplit(env["KYMA_CATALOG_URL"]).hostname == "catalog"
    assert urlsplit(env["KYMA_S3_ENDPOINT_URL"]).hostname == "objects"
    env["KYMA_CATALOG_URL"] = catalog_url
    env["KYMA_S3_ENDPOINT_URL"] = s3_endpoint
    bucket = urlsplit(env["KYMA_OBJECT_STORE"]).hostname
    boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        aws_access_key_id=env["KYMA_S3_ACCESS_KEY_ID"],
        aws_secret_access_key=env["KYMA_S3_SECRET_ACCESS_KEY"],
        region_name="us-east-1",
    ).create_bucket(Bucket=bucket)
    image = image_env()
    image["KYMA_HOME"] = str(tmp_path / "home")
    image["KYMA_HTTP_HOST"] = "127.0.0.1"  # tests stay on loopback; 0.0.0.0 is checked above
    ports = {PORT_SETTINGS[p]: str(free_port()) for p in published(compose()["services"]["kyma"])}
    return {**image, **env, **ports}


def test_the_image_command_serves_every_published_port(stack_env: dict[str, str]) -> None:
    command = [json.loads(dockerfile()[i][0]) for i in ("ENTRYPOINT", "CMD")]
    assert command == [["kyma"], ["serve"]]  # what Serve runs, as python -m kyma serve
    serve = Serve(Path(stack_env["KYMA_HOME"]), **stack_env)
    try:
        token = re.search(r"first token   (kyma_\S+)", "".join(serve.output))
        assert token, serve.output
        bearer = {"Authorization": f"Bearer {token.group(1)}"}
        http = f"http://127.0.0.1:{stack_env['KYMA_HTTP_PORT']}"
        assert serve.url == http
        # The image's HEALTHCHECK command, on this run's port.
        check = json.loads(dockerfile()["HEALTHCHECK"][0].split(" CMD ", 1)[1])
        port = stack_env["KYMA_HTTP_PORT"]
        check = [sys.executable, *check[1:-1], check[-1].replace(":8080/", f":{port}/")]
        assert subprocess.run(check, timeout=30).returncode == 0
        query = json.dumps({"sql": "SELECT 1 AS one"}).encode()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(f"{http}/v1/query", query), timeout=30)
        with refused.value:
            assert refused.value.code == 401
        asked = urllib.request.Request(f"{http}/v1/query", query, bearer)
        with urllib.request.urlopen(asked, timeout=30) as answer:
            assert json.load(answer)["rows"] == [[1]]
        flight = f"grpc://127.0.0.1:{stack_env['KYMA_FLIGHT_PORT']}"
        options = {DatabaseOptions.AUTHORIZATION_HEADER.value: bearer["Authorization"]}
        with connect(flight, db_kwargs=options, autocommit=True) as conn, conn.cursor() as cur:
            cur.execute("SELECT 2 AS two")
            assert cur.fetchall() == [(2,)]
        empty = logs_service_pb2.ExportLogsServiceRequest()
        otlp_http = f"http://127.0.0.1:{stack_env['KYMA_OTLP_HTTP_PORT']}/v1/logs"
        exported = urllib.request.Request(
            otlp_http,
            empty.SerializeToString(),
            {**bearer, "Content-Type": "application/x-protobuf"},
        )
        with urllib.request.urlopen(exported, timeout=30) as answer:
            assert answer.status == 200
        with grpc.insecure_channel(f"127.0.0.1:{stack_env['KYMA_OTLP_GRPC_PORT']}") as channel:
            export = channel.unary_unary(
                "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
                request_serializer=logs_service_pb2.ExportLogsServiceRequest.SerializeToString,
                response_deserializer=logs_service_pb2.ExportLogsServiceResponse.FromString,
            )
            export(empty, metadata=[("authorization", bearer["Authorization"])], timeout=10)
        dsn = f"host=127.0.0.1 port={stack_env['KYMA_PG_PORT']} user=kyma connect_timeout=10"
        with psycopg.connect(dsn, password=token.group(1), autocommit=True) as conn:
            assert conn.execute("SELECT 3 AS three").fetchall() == [(3,)]
    finally:
        assert serve.stop() == 0
    again = Serve(Path(stack_env["KYMA_HOME"]), **stack_env)  # the token is printed only once
    assert again.stop() == 0
    assert "first token" not in "".join(again.output)
