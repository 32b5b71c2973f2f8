"""Jobs over REST: start a bulk load, follow its progress."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify, request

from kyma.jobs import JobRegistry, parse_load

blueprint = Blueprint("jobs", __name__)


def _jobs() -> JobRegistry:
    return current_app.extensions["kyma"].jobs


@blueprint.post("/v1/jobs/load")
def load():  # type: ignore[no-untyped-def]
    """Body: table, source (path, folder, glob or s3://…), format?, schema_evolve?; 202."""
    job = _jobs().submit_load(parse_load(request.get_json(force=True, silent=True)))
    return jsonify(job.to_json()), 202


@blueprint.get("/v1/jobs")
def list_all():  # type: ignore[no-untyped-def]
    return jsonify({"jobs": [j.to_json() for j in _jobs().list()]})


@blueprint.get("/v1/jobs/<job_id>")
def status(job_id: str):  # type: ignore[no-untyped-def]
    return jsonify(_jobs().get(job_id).to_json())
