"""Guards on the public surface: exports, documented commands, settings."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import graphmem
from graphmem.cli import app

ROOT = Path(__file__).resolve().parents[1]


def test_all_lists_exactly_the_public_names():
    public = {n for n, v in vars(graphmem).items() if not n.startswith("_") and not inspect.ismodule(v)}
    assert set(graphmem.__all__) == public
    assert len(graphmem.__all__) == len(set(graphmem.__all__))


def test_every_cli_command_is_documented_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [c.name or c.callback.__name__ for c in app.registered_commands]
    assert len(commands) >= 12
    for name in commands:
        assert re.search(rf"graphmem (-\S+ \S+ )*{name}\b", readme), f"`graphmem {name}` is not in README.md"


def test_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
    install = next(b for b in blocks if "graphmem demo" in b).strip().splitlines()[-1]
    test = next(b for b in blocks if "pytest" in b and "graphmem demo" not in b).strip().splitlines()[-1]
    assert install in ci.splitlines() and test in ci.splitlines()


def test_docker_compose_pins_the_launchers_neo4j_release():
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    neo4j = compose["services"]["neo4j"]
    pom = (ROOT / "tools" / "neo4j-server" / "pom.xml").read_text(encoding="utf-8")
    version = re.search(r"<neo4j.version>(5\.26\.\d+)</neo4j.version>", pom).group(1)
    assert neo4j["image"] == f"neo4j:{version}-community"  # one patch release everywhere
    assert all(p.startswith("127.0.0.1:") for p in neo4j["ports"])
    assert "${GRAPHMEM_NEO4J_PASSWORD" in neo4j["environment"]["NEO4J_AUTH"]
    assert {"neo4j-data", "neo4j-logs"} <= set(compose["volumes"])
    assert "cypher-shell" in " ".join(neo4j["healthcheck"]["test"])
    assert "heap_max__size" in " ".join(neo4j["environment"])
