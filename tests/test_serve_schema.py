"""schemathesis against the live server's own OpenAPI schema: generated requests, valid and
not, to every route; no 5xx, every status, content type and body (problems included) as the
schema says, schema-invalid data refused, and a request without the key refused (401) as the
declared security scheme says. Not checked: that every schema-valid request is
accepted (positive_data_acceptance): graphmem's validators go beyond what JSON Schema states
(a text of only whitespace, lone surrogates, metadata that is not JSON-safe) and refuse those
with a 422 problem naming the field."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from schemathesis.specs.openapi.checks import positive_data_acceptance

from .test_serve import Live, cli


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx, value) -> bytes:  # POST /v1/import takes an export's JSONL as text
    return value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogatepass")


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    server = Live("embedded", tmp_path_factory.mktemp("schema"), GRAPHMEM_EXTRACTION="off")
    key = cli(server.env, "keys", "create", "--namespace", "schema").stdout.split()[-1]  # auth is checked too
    yield schemathesis.openapi.from_url(server.url + "/openapi.json"), {"Authorization": f"Bearer {key}"}
    log = server.stop()
    assert "Traceback" not in log, log


def test_every_route_keeps_to_its_schema(api):
    schema, auth = api
    operations = [op for op in (result.ok() for result in schema.get_all_operations())
                  if op.path != "/v1/extraction/flush"]  # it runs the model over the fuzzed turns (test_serve checks it)
    assert len(operations) >= 30
    for operation in operations:
        @given(case=operation.as_strategy())
        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                  database=None)
        def keeps_to_schema(case):
            case.call_and_validate(headers=auth, excluded_checks=[positive_data_acceptance])

        keeps_to_schema()
