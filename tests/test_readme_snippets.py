"""Every Python snippet of README.md runs as written, in order, in a fresh folder. The README's
text carries names from one snippet to the next (``mem``, ``pref``); a snippet that uses ``mem``
without opening one gets a ``Memory("agent.db")`` open on the same file, as a reader following
along would have. Top-level ``await`` runs in an event loop. Embedded store, extraction off (the
demo and the extraction tests run the model)."""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
from pathlib import Path

from graphmem import Memory

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def snippets() -> list[tuple[int, str]]:
    text = README.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in BLOCK.finditer(text)]


def test_every_python_snippet_of_the_readme_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    blocks = snippets()
    assert len(blocks) >= 7
    scope: dict = {"__name__": "readme"}
    opened: list[Memory] = []
    try:
        for line, code in blocks:
            opens = re.search(r"\b(Async)?Memory(\.open)?\(", code)
            if not opens and re.search(r"\bmem\.", code) and not (opened and scope.get("mem") is opened[-1]):
                opened.append(Memory("agent.db"))  # the snippet continues an earlier one
                scope["mem"] = opened[-1]
            compiled = compile(code, f"README.md:{line}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            result = eval(compiled, scope)  # noqa: S307 (the README's own code)
            if inspect.iscoroutine(result):
                asyncio.run(result)
            if isinstance(scope.get("mem"), Memory) and scope["mem"] not in opened and opens and "with " not in code:
                opened.append(scope["mem"])  # opened by the snippet and left open, as the README leaves it
    finally:
        for mem in opened:
            mem.close()
    out = capsys.readouterr().out
    assert "['Ann prefers tea over coffee']" in out  # the first snippet's printed history
    assert "{'text': 'Ana is vegetarian'}" in out and out.count("Ana is vegetarian") >= 2  # store and retriever agree
