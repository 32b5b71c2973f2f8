"""Tokens on Flight SQL (ADBC) and OTLP (the SDK's exporters, and raw calls for the codes)."""

from __future__ import annotations

import adbc_driver_manager
import grpc
import pyarrow as pa
import pyarrow.flight as flight
import pytest
import requests
from adbc_driver_manager import AdbcStatusCode
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from secure_client import call
from secure_serve import Secure

from kyma.flight import _commands as cmd
from kyma.flight import _messages as msg


def flight_rows(secure: Secure, token: str | None, sql: str) -> list[tuple]:
    with secure.adbc(token) as conn, conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def test_flight_sql_needs_a_token(secure: Secure) -> None:
    assert secure.serve.flight_url.startswith("grpc+tls://127.0.0.1:")
    for token, status in ((None, "UNAUTHENTICATED"), ("kyma_nope", "UNAUTHENTICATED")):
        with pytest.raises(Exception, match=status):
            flight_rows(secure, token, "SELECT msg FROM logs")
    with pytest.raises(Exception, match="UNAUTHENTICATED.*revoked"):
        flight_rows(secure, secure.tokens["revoked"], "SELECT msg FROM logs")


def test_flight_sql_scopes_and_table_grants(secure: Secure) -> None:
    """ADBC reports gRPC's PERMISSION_DENIED as UNAUTHORIZED (PermissionDenied; …)."""
    token = secure.tokens["read_logs"]
    assert ("logs row",) in flight_rows(secure, token, "SELECT msg FROM logs")
    with pytest.raises(Exception, match="'secrets'.*PermissionDenied"):
        flight_rows(secure, token, "SELECT msg FROM secrets")
    with pytest.raises(Exception, match="'admin'.*PermissionDenied"):
        flight_rows(secure, secure.tokens["read"], "CREATE TABLE nope (a long)")
    with pytest.raises(Exception, match="'read'.*PermissionDenied"):
        flight_rows(secure, secure.tokens["ingest_logs"], "SELECT msg FROM logs")
    with secure.adbc(token) as conn:  # metadata lists only granted tables
        names = {t["table_name"] for s in _kyma_schemas(conn) for t in s["db_schema_tables"]}
    assert "logs" in names and "secrets" not in names
    assert flight_rows(secure, secure.tokens["admin"], "SELECT count(*) FROM secrets") == [(1,)]


def _kyma_schemas(conn) -> list[dict]:  # type: ignore[no-untyped-def]
    objects = conn.adbc_get_objects(depth="tables", catalog_filter="kyma").read_all()
    return objects.to_pylist()[0]["catalog_db_schemas"]


def _sdk_export(exporter, service: str) -> None:  # type: ignore[no-untyped-def]
    provider = LoggerProvider(resource=Resource.create({"service.name": service}))
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    provider.get_logger("security").emit(body=f"hello from {service}")
    provider.shutdown()


def _logs_by(secure: Secure, service: str) -> list:
    sql = f"SELECT body FROM otel_logs WHERE service_name = '{service}'"
    status, answer, _ = secure.sql(sql, secure.tokens["admin"])
    return answer["rows"] if status == 200 else []


@pytest.mark.parametrize("protocol", ["grpc", "http"])
def test_otlp_sdk_exporters_send_the_token(secure: Secure, protocol: str) -> None:
    for label, token in (("anonymous", None), ("allowed", secure.tokens["ingest_logs"])):
        headers = {"authorization": f"Bearer {token}"} if token else None
        if protocol == "grpc":
            endpoint = secure.serve.otlp_grpc_url.replace("grpc+tls://", "https://")
            credentials = grpc.ssl_channel_credentials(secure.tls.ca.read_bytes())
            exporter = GrpcLogs(endpoint, credentials=credentials, headers=headers, timeout=10)
        else:
            url = f"{secure.serve.otlp_http_url}/v1/logs"
            # requests lets REQUESTS_CA_BUNDLE (set on this machine) beat the exporter's CA.
            session = requests.Session()
            session.trust_env = False
            exporter = HttpLogs(
                url, certificate_file=str(secure.tls.ca), headers=headers, session=session
            )
        _sdk_export(exporter, f"svc-{protocol}-{label}")
    assert _logs_by(secure, f"svc-{protocol}-allowed") == [[f"hello from svc-{protocol}-allowed"]]
    assert _logs_by(secure, f"svc-{protocol}-anonymous") == []


def test_otlp_grpc_status_codes(secure: Secure) -> None:
    target = secure.serve.otlp_grpc_url.removeprefix("grpc+tls://")
    credentials = grpc.ssl_channel_credentials(secure.tls.ca.read_bytes())
    with grpc.secure_channel(target, credentials) as channel:
        logs = channel.unary_unary(
            "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
            request_serializer=logs_service_pb2.ExportLogsServiceRequest.SerializeToString,
            response_deserializer=logs_service_pb2.ExportLogsServiceResponse.FromString,
        )
        traces = channel.unary_unary(
            "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
            request_serializer=trace_service_pb2.ExportTraceServiceRequest.SerializeToString,
            response_deserializer=trace_service_pb2.ExportTraceServiceResponse.FromString,
        )
        ingest = [("authorization", f"Bearer {secure.tokens['ingest_logs']}")]
        logs(logs_service_pb2.ExportLogsServiceRequest(), metadata=ingest, timeout=10)
        cases = [
            (logs, None, grpc.StatusCode.UNAUTHENTICATED),
            (logs, [("authorization", "Bearer kyma_nope")], grpc.StatusCode.UNAUTHENTICATED),
            (logs, [("authorization", f"Bearer {secure.tokens['read']}")], "PERMISSION_DENIED"),
            (traces, ingest, grpc.StatusCode.PERMISSION_DENIED),  # otel_traces: not granted
        ]
        for method, metadata, code in cases:
            request = (
                logs_service_pb2.ExportLogsServiceRequest
                if method is logs
                else trace_service_pb2.ExportTraceServiceRequest
            )()
            with pytest.raises(grpc.RpcError) as raised:
                method(request, metadata=metadata, timeout=10)
            assert raised.value.code().name == getattr(code, "name", code)


def test_otlp_http_status_codes(secure: Secure) -> None:
    empty = logs_service_pb2.ExportLogsServiceRequest().SerializeToString()
    url = secure.serve.otlp_http_url
    ingest = secure.tokens["ingest_logs"]
    for path, token, status in (
        ("/v1/logs", None, 401),
        ("/v1/logs", "kyma_nope", 401),
        ("/v1/logs", secure.tokens["read"], 403),
        ("/v1/traces", ingest, 403),
        ("/v1/logs", ingest, 200),
    ):
        got, _, headers = call(
            f"{url}{path}", token=token, body=empty, context=secure.context, raw=True
        )
        assert got == status, (path, token)
        if status == 401:
            assert headers["www-authenticate"].startswith("Bearer")


def _query_descriptor(sql: str) -> flight.FlightDescriptor:
    return flight.FlightDescriptor.for_command(cmd.pack(msg.CommandStatementQuery(query=sql)))


def test_flight_errors_carry_no_traceback(secure: Secure) -> None:
    """pyarrow appends a Python traceback to the statuses raised from Python (bar FlightError):
    kyma's messages reach clients with their code and without the server's stack."""
    cases = (  # token, statement, pyarrow's exception, ADBC's code, words of the message
        ("read", "SELECT msg FROM logs WHERE (", pa.ArrowInvalid, "INVALID_ARGUMENT", "syntax"),
        ("read", "SELECT msg FROM nope", pa.ArrowKeyError, "NOT_FOUND", "'nope'"),
        (
            "read_logs",
            "SELECT msg FROM secrets",
            flight.FlightUnauthorizedError,
            "UNAUTHORIZED",
            "'secrets'",
        ),
    )
    for token, sql, kind, code, words in cases:
        client, options = secure.flight(secure.tokens[token])
        with pytest.raises(kind, match=words) as raised:
            client.get_flight_info(_query_descriptor(sql), options)
        assert "Traceback" not in str(raised.value) and 'File "' not in str(raised.value)
        with (
            secure.adbc(secure.tokens[token]) as conn,
            conn.cursor() as cur,
            pytest.raises(adbc_driver_manager.Error, match=words) as failed,
        ):
            cur.execute(sql)
        assert failed.value.status_code == AdbcStatusCode[code], str(failed.value)
        assert "Traceback" not in str(failed.value) and 'File "' not in str(failed.value)
    with pytest.raises(pa.ArrowInvalid, match="expected") as raised:  # not Flight SQL
        client.get_flight_info(flight.FlightDescriptor.for_command(b"junk"), options)
    assert "Traceback" not in str(raised.value)
    secure.assert_healthy()
