"""Guards on the public surface: exports, documented commands, settings."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import graphmem
from graphmem.cli import app

ROOT = Path(__file__).resolve().parents[1]


def test_all_lists_exactly_the_public_names():
    # dir() holds the names that load on first use too (graphmem.__getattr__)
    public = {n for n in dir(graphmem) if not n.startswith("_") and not inspect.ismodule(getattr(graphmem, n))}
    assert set(graphmem.__all__) == public
    assert len(graphmem.__all__) == len(set(graphmem.__all__))


def test_every_cli_command_is_documented():
    docs = "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").rglob("*.md")))
    commands = [c.name or c.callback.__name__ for c in app.registered_commands]
    assert len(commands) >= 12
    for name in commands:
        assert re.search(rf"graphmem (-\S+ \S+ )*{name}\b", docs), f"`graphmem {name}` is not in docs/"


def test_the_readme_is_short_and_the_docs_site_builds_strictly(tmp_path):
    import os
    import subprocess
    import sys

    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 300
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "reference" / "memory" / "index.html").read_text(encoding="utf-8").count("recall") > 5


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


PACKAGE = ROOT / "graphmem"
BELOW_ENGINE = ("models", "store", "embed", "text", "extract", "retrieve", "lifecycle", "background.py", "errors.py",
                "settings.py")


def _imports(path: Path) -> set[str]:
    """The absolute names of the modules ``path`` imports."""
    import ast

    package = list(path.relative_to(ROOT).parent.parts)
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            names.add(".".join(base + ([node.module] if node.module else [])))
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_nothing_below_the_engine_imports_it():
    checked = 0
    for part in BELOW_ENGINE:
        files = [PACKAGE / part] if part.endswith(".py") else sorted((PACKAGE / part).rglob("*.py"))
        for f in files:
            for name in _imports(f):
                checked += 1
                assert not name.startswith(("graphmem.engine", "graphmem.cli", "graphmem.scripts")), \
                    f"{f.relative_to(ROOT)} imports {name}"
    assert checked > 100


def test_no_face_reaches_into_memory_private_members():
    pattern = re.compile(r"\b(mem|memory|self\.memory)\._[a-z]")
    for f in [*PACKAGE.rglob("*.py"), *(ROOT / "tests").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")]:
        if f.parent.name == "engine":
            continue
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            assert not pattern.search(line), f"{f.relative_to(ROOT)}:{n} uses a private member of Memory: {line.strip()}"


def test_no_module_grows_past_about_600_lines():
    for f in PACKAGE.rglob("*.py"):
        n = len(f.read_text(encoding="utf-8").splitlines())
        assert n <= 610, f"{f.relative_to(ROOT)} has {n} lines: split it by concern"


def test_store_capabilities_are_declared_not_probed():
    for f in (PACKAGE / "engine").rglob("*.py"):
        text = f.read_text(encoding="utf-8")
        assert "getattr(self.store" not in text and "hasattr(self.store" not in text, f
    for f in (PACKAGE / "cli").rglob("*.py"):
        assert "getattr(store" not in f.read_text(encoding="utf-8"), f
