"""Every Python snippet of README.md and of the documentation pages (in the site's order) runs as
written, in order, in a fresh folder. The text carries names from one snippet to the next
(``mem``, ``pref``); a snippet that uses ``mem`` without opening one gets a
``Memory("agent.db")`` open on the same file, as a reader following along would have.
Top-level ``await`` runs in an event loop. Embedded store, extraction off (the demo and the
extraction tests run the model)."""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
from pathlib import Path

from graphmem import Memory

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def pages() -> list[Path]:
    """README.md, then the site's pages in its navigation order."""
    import yaml

    def walk(nav: list) -> list[str]:
        return [p for entry in nav for v in entry.values() for p in (walk(v) if isinstance(v, list) else [v])]

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    return [ROOT / "README.md", *(ROOT / "docs" / p for p in walk(nav))]


def snippets() -> list[tuple[str, str]]:
    """(where, code): every Python block, where as "file:line"."""
    out = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        out += [(f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 2}", m.group(1))
                for m in BLOCK.finditer(text)]
    return out


def test_every_python_snippet_of_the_readme_and_the_docs_runs(tmp_path, monkeypatch, capsys):
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
            compiled = compile(code, line, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
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
