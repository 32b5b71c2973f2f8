"""Federation through a real ``kyma serve``: connector API, concurrent queries, restart."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from serve_helpers import Serve


def test_connector_survives_restart_and_serves_concurrent_queries(tmp_path, source_db) -> None:
    env = {"KYMA_SECRET_TEST_SERVE_SOURCE": source_db.password}
    serve = Serve(tmp_path / "home", **env)
    try:
        status, created = serve.post(
            "/v1/connectors",
            {
                "name": "src",
                "type": "postgres",
                "connection": {
                    "url": source_db.url,
                    "secret_ref": "$env:KYMA_SECRET_TEST_SERVE_SOURCE",
                    "pool_size": 2,
                },
            },
        )
        assert status == 201 and created["state"] == "ready", created
        query = "SELECT grp, count(*) AS n FROM src.public.items GROUP BY grp ORDER BY grp"
        with ThreadPoolExecutor(6) as pool:
            answers = list(pool.map(lambda _: serve.post("/v1/query", {"sql": query}), range(12)))
        assert {status for status, _ in answers} == {200}
        assert len({str(answer["rows"]) for _, answer in answers}) == 1
        assert sum(n for _, n in answers[0][1]["rows"]) == 300
    finally:
        assert serve.stop() == 0
    again = Serve(tmp_path / "home", **env)
    try:
        status, connector = again.get("/v1/connectors/src")
        assert status == 200 and connector["connection"]["pool_size"] == 2
        assert again.sql("SELECT count(*) FROM src.public.users")["rows"] == [[50]]
        edit = {"connection": {"pool_size": 3}}
        status, edited = again.post("/v1/connectors/src", edit, method="PATCH")
        assert status == 200 and edited["reachable"] is True, edited
        assert edited["connection"]["pool_size"] == 3
        assert again.get("/v1/connectors/src/status")[1]["pool"]["size"] == 3
        assert again.sql("SELECT count(*) FROM src.public.users")["rows"] == [[50]]
        insecure = {"connection": {"tls": "disabled"}}
        status, refused = again.post("/v1/connectors/src", insecure, method="PATCH")
        assert status == 400 and refused["message"].startswith("connection.allow_insecure:")
        assert source_db.password not in "".join(serve.output + again.output)
    finally:
        assert again.stop() == 0
