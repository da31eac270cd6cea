"""Type checkers see graphmem as its users do: the package ships ``py.typed``; ``AsyncMemory``'s
stub is what ``Memory``'s signatures give (``python -m graphmem.scripts.async_stub``); pyright
finds no error in ``examples/`` or in the Python snippets of README.md and ``docs/``, and does find a misspelt
``AsyncMemory`` method (so the check can fail)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from graphmem.scripts.async_stub import STUB, render

from .conftest import ROOT, system_tool
from .test_readme_snippets import snippets

PROBE = '''
from graphmem import AsyncMemory


async def probe(mem: AsyncMemory) -> float:
    hits = await mem.recall("what does Ana drink?", k=3)
    await mem.recal("a misspelt method")
    return hits[0].score
'''


def test_the_package_is_typed_and_the_async_stub_is_current():
    assert (ROOT / "graphmem" / "py.typed").exists()
    assert STUB.read_text(encoding="utf-8") == render(), "the stub is stale: python -m graphmem.scripts.async_stub"


def readme_module() -> str:
    """The Python snippets of README.md and docs/ as one module, in order; one with top-level ``await`` becomes the
    body of an ``async def`` (where a reader would put it)."""
    parts = []
    for n, (where, code) in enumerate(snippets()):
        if "await " in code:
            code = f"async def snippet_{n}() -> None:\n" + textwrap.indent(code, "    ")
        parts.append(f"# {where}\n{code}")
    return "\n\n".join(parts)


def test_pyright_finds_no_error_in_the_examples_or_the_readme(tmp_path):
    system_tool(shutil.which("node"), "Node.js (pyright runs on it)")
    (tmp_path / "readme_snippets.py").write_text(readme_module(), encoding="utf-8")
    (tmp_path / "probe.py").write_text(PROBE, encoding="utf-8")
    files = [*sorted(str(p) for p in (ROOT / "examples").glob("*.py")), str(tmp_path / "readme_snippets.py"),
             str(tmp_path / "probe.py")]
    pyright = str(Path(sys.executable).parent / "pyright")
    done = subprocess.run([pyright, "--outputjson", "--pythonpath", sys.executable, *files], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    report = json.loads(done.stdout)
    errors = [(Path(d["file"]).name, d["range"]["start"]["line"] + 1, d["message"])
              for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert report["summary"]["filesAnalyzed"] == len(files)
    assert [(name, line) for name, line, _ in errors] == [("probe.py", 7)], errors
    assert 'Cannot access attribute "recal" for class "AsyncMemory"' in errors[0][2]
