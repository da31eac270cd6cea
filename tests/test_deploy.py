"""The container: Dockerfile and docker-compose.yml checked as files (there is no Docker engine
here), and the very commands they run (the service's command, its healthcheck) run outside
Docker against the tests' real Neo4j, as the container would run them."""

from __future__ import annotations

import json
import os
import secrets
import shlex
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from .conftest import BACKENDS, NEO4J_TEST_PASSWORD, NEO4J_TEST_URI, wipe_neo4j
from .test_serve import _free_port, cli

ROOT = Path(__file__).resolve().parent.parent


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) pairs, continuation lines joined, comments dropped."""
    lines, joined = [], ""
    for raw in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines():
        if raw.lstrip().startswith("#") or not raw.strip():
            continue
        joined += raw.rstrip("\\").rstrip() + " " if raw.rstrip().endswith("\\") else raw
        if not raw.rstrip().endswith("\\"):
            word, _, rest = joined.strip().partition(" ")
            lines.append((word.upper(), rest.strip()))
            joined = ""
    return lines


def service() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))["services"]["graphmem"]


def test_dockerfile_builds_the_api_with_the_model_inside():
    steps = dockerfile()
    image = next(a for i, a in steps if i == "FROM")
    assert image.startswith("python:3.11.") and image.count(".") >= 2  # a patch release, not a moving tag
    runs = " ".join(a for i, a in steps if i == "RUN")
    assert 'pip install ".[llm,serve]"' in runs and "graphmem model fetch" in runs  # no download at run time
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install' in runs  # llama.cpp for any CPU, not the build machine's
    for i, a in steps:
        if i == "COPY":
            for src in a.split()[:-1]:
                assert (ROOT / src).exists(), f"COPY {src}: not in the repository"
    assert next(a for i, a in steps if i == "USER") != "root"
    cmd = json.loads(next(a for i, a in steps if i == "CMD"))
    assert cmd == service()["command"] and cmd[:2] == ["graphmem", "serve"]
    assert next(a for i, a in steps if i == "EXPOSE") == cmd[cmd.index("--port") + 1]
    health = next(a for i, a in steps if i == "HEALTHCHECK")
    assert json.loads(health.split(" CMD ", 1)[1]) == service()["healthcheck"]["test"][1:]
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert {".venv", ".git", "*.db"} <= set(ignored)


def test_compose_runs_the_api_on_neo4j_on_loopback_only():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    api = compose["services"]["graphmem"]
    assert api["build"] == "." and api["depends_on"]["neo4j"]["condition"] == "service_healthy"
    assert all(p.startswith("127.0.0.1:") for p in api["ports"])
    env = api["environment"]
    assert env["GRAPHMEM_BACKEND"] == "neo4j" and env["GRAPHMEM_NEO4J_URI"] == "bolt://neo4j:7687"
    assert "${GRAPHMEM_NEO4J_PASSWORD" in env["GRAPHMEM_NEO4J_PASSWORD"]
    assert env["GRAPHMEM_KEYS_PATH"].startswith("/data/") and any(v.endswith(":/data") for v in api["volumes"])
    assert "/ready" in " ".join(api["healthcheck"]["test"]) and "graphmem-data" in compose["volumes"]
    assert env["GRAPHMEM_FIRST_KEY"].startswith("${GRAPHMEM_FIRST_KEY:?")  # compose refuses to start without it
    assert api["restart"].startswith("on-failure:")  # a configuration error never loops
    assert api["deploy"]["replicas"] == 2 and "container_name" not in api  # replicas share the one Neo4j
    assert api["ports"] == ["127.0.0.1:8765-8766:8765"]  # a host port each


@pytest.mark.skipif("neo4j" not in BACKENDS, reason="GRAPHMEM_TEST_BACKENDS excludes neo4j")
def test_the_compose_command_and_healthcheck_run_outside_docker(neo4j_server, tmp_path):
    wipe_neo4j()  # other tests bind the database to their 8-d test embedder
    api = service()
    port = str(_free_port())
    env = {**os.environ, **{k: str(v) for k, v in api["environment"].items()}, "GRAPHMEM_NEO4J_URI": NEO4J_TEST_URI,
           "GRAPHMEM_NEO4J_PASSWORD": NEO4J_TEST_PASSWORD, "GRAPHMEM_KEYS_PATH": str(tmp_path / "keys.db"),
           "GRAPHMEM_EXTRACTION": "off", "GRAPHMEM_FIRST_KEY_NAMESPACE": "deploy"}
    del env["GRAPHMEM_FIRST_KEY"]  # compose's ${...:?} guard: here, first without one
    command = [sys.executable, "-m", "graphmem.cli", *api["command"][1:]]
    command[command.index("--port") + 1] = port
    refused = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1 and "without API keys: set GRAPHMEM_FIRST_KEY" in refused.stderr  # one line, exit 1
    assert len(refused.stderr.strip().splitlines()) == 1
    short = subprocess.run(command, env={**env, "GRAPHMEM_FIRST_KEY": "too-short"}, capture_output=True, text=True,
                           timeout=120)
    assert short.returncode == 1 and "first_key" in short.stderr and "Traceback" not in short.stderr
    key = secrets.token_hex(32)
    assert serve_once(command, {**env, "GRAPHMEM_FIRST_KEY": key}, port, api) == "deploy"  # stored on the first start
    again = serve_once(command, {**env, "GRAPHMEM_FIRST_KEY": secrets.token_hex(32)}, port, api, key)
    assert again == "deploy"  # a later start keeps the key file as it is (another first key is not added)
    assert [k["label"] for k in json.loads(cli(env, "keys", "list", "--json").stdout)] == ["GRAPHMEM_FIRST_KEY"]
    assert shlex.join(api["command"]).startswith("graphmem serve --host 0.0.0.0")


def serve_once(command: list[str], env: dict, port: str, api: dict, key: str | None = None) -> str:
    """Start the service's command, wait for its own healthcheck, check that a request without a
    key is refused and one with ``key`` (default: GRAPHMEM_FIRST_KEY) answers; its namespace."""
    key = key or env["GRAPHMEM_FIRST_KEY"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        health = [sys.executable if api["healthcheck"]["test"][1] == "python" else api["healthcheck"]["test"][1],
                  *[a.replace(":8765/", f":{port}/") for a in api["healthcheck"]["test"][2:]]]
        deadline = time.monotonic() + 120
        while subprocess.run(health, capture_output=True).returncode != 0:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else "timeout"
            time.sleep(0.5)
        url = f"http://127.0.0.1:{port}"
        assert httpx.get(url + "/v1/stats").status_code == 401
        stats = httpx.get(url + "/v1/stats", headers={"Authorization": f"Bearer {key}"})
        assert stats.status_code == 200, stats.text
        return stats.json()["namespace"]
    finally:
        proc.terminate()
        proc.wait(30)
