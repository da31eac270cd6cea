"""The graph view: its data on both backends, the self-contained page, /ui and /v1/graph on a live
server, and the page in a real headless Chromium (Debian's package, driven by Playwright; no
browser is downloaded): no console errors, the expected nodes and edges in the DOM, search,
the side panel, the time slider and turns on demand. A screenshot is kept in test-artifacts/."""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx

from graphmem.viz import graph_data, render

from .conftest import make_memory, system_tool, without_ids
from graphmem.scripts.sample import ingest
from .replay import ReplayExtractor
from .test_serve import Live, cli

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
TRICKY = "</script><script>window.hacked=1</script> & <b>bold</b>"


def fixture_memory(backend, tmp_path):
    from graphmem.settings import Settings

    mem = make_memory(backend, tmp_path, settings=Settings(extraction="manual"), extractor=ReplayExtractor())
    ingest(mem)
    mem.extract()
    mem.remember(TRICKY, subject="Maya")  # text that must not break out of the page
    return mem


def test_graph_data_on_both_backends(backend, tmp_path):
    mem = fixture_memory(backend, tmp_path)
    try:
        data = graph_data(mem)
        kinds = collections.Counter(n["kind"] for n in data["nodes"])
        assert {"entity", "memory", "episode", "procedure", "step"} <= set(kinds) and "message" not in kinds
        types = collections.Counter(e["type"] for e in data["edges"])
        assert types["SUPERSEDES"] == 1 and types["MENTIONS"] > 10 and types["PRODUCED"] > 0
        assert types["FIRST_STEP"] == 1 and types["NEXT"] >= 3  # the procedure drawn as its chain
        ids = {n["id"] for n in data["nodes"]}
        assert all(e["source"] in ids and e["target"] in ids for e in data["edges"])
        julia = next(n for n in data["nodes"] if n["kind"] == "memory" and "Julia" in n["label"])
        assert set(julia["factors"]) == {"importance", "confidence", "recency", "frequency"}
        assert data["note"] is None and data["total"] == len([n for n in data["nodes"] if n["kind"] != "step"])
        with_turns = graph_data(mem, messages=True)
        turns = len(mem.list("message", limit=1000))
        assert turns >= 16 and collections.Counter(n["kind"] for n in with_turns["nodes"])["message"] == turns
        around = graph_data(mem, entity="Maya", limit=12)
        assert len([n for n in around["nodes"] if n["kind"] != "step"]) == 12
        assert "sampled around Maya" in around["note"]
        assert graph_data(mem, "nobody-here")["note"] == "nothing written here yet"
    finally:
        mem.close()


def test_the_page_is_self_contained_and_escapes_what_it_embeds(tmp_path):
    mem = fixture_memory("embedded", tmp_path)
    try:
        page = render(graph_data(mem))
    finally:
        mem.close()
    assert "<script src" not in page and "https://" not in page.split("<script>", 1)[0]
    assert page.count("</script>") == 3  # the data, d3, the view: the memory's text did not close a tag
    assert "window.hacked=1" in page and "<\\/script><script>window.hacked" in page


def test_viz_command_writes_the_page(tmp_path):
    mem = fixture_memory("embedded", tmp_path)
    mem.close()
    env = {**os.environ, "GRAPHMEM_PATH": str(tmp_path / "graphmem.db")}
    done = cli(env, "viz", "--entity", "Maya", "--limit", "15", "-o", str(tmp_path / "g.html"))
    assert "sampled around Maya" in done.stdout and (tmp_path / "g.html").stat().st_size > 200_000


def browser():
    chromium = system_tool(os.environ.get("GRAPHMEM_CHROMIUM") or shutil.which("chromium")
                           or shutil.which("chromium-browser"),
                           "Chromium (the browser tests: apt-get install chromium, or GRAPHMEM_CHROMIUM=path)")
    from playwright.sync_api import sync_playwright

    return sync_playwright(), chromium


def open_page(p, chromium: str, url: str):
    b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
    page = b.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    return b, page, errors


OVERLAPS = """() => {
  const boxes = [...document.querySelectorAll('g.node:not(.hidden) text.node-label')]
    .map(t => [t.textContent, t.getBoundingClientRect()]).filter(([, r]) => r.width > 0);
  const out = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, r] = boxes[i], [b, s] = boxes[j];
    if (r.left < s.right - 0.5 && s.left < r.right - 0.5 && r.top < s.bottom - 0.5 && s.top < r.bottom - 0.5) out.push([a, b]);
  }
  return out;
}"""


def test_the_page_in_headless_chromium(tmp_path):
    mem = fixture_memory("embedded", tmp_path)
    try:
        data = graph_data(mem, messages=True)
    finally:
        mem.close()
    (tmp_path / "graph.html").write_text(render(data), encoding="utf-8")
    manager, chromium = browser()
    with manager as p:
        b, page, errors = open_page(p, chromium, (tmp_path / "graph.html").as_uri())
        page.wait_for_selector("g.node", state="attached")
        assert page.locator("g.node").count() == len(data["nodes"])
        assert page.locator("line.edge").count() == len(data["edges"])
        assert page.locator("line.edge-supersedes").count() == 1
        assert page.evaluate("() => window.hacked") is None  # the embedded text stayed text
        turns = sum(1 for n in data["nodes"] if n["kind"] == "message")
        assert page.locator("g.node-message.hidden").count() == turns  # turns on demand
        page.check("#show-messages")
        assert page.locator("g.node-message.hidden").count() == 0
        page.uncheck("#show-messages")
        page.fill("#search", "Julia")
        hits = page.locator("g.node.hit")
        assert hits.count() >= 2 and page.locator("g.node.dim").count() > 10
        page.locator("g.node-memory.hit circle").first.click()
        panel = page.inner_text("#panel")
        assert "score factors" in panel and "history" in panel and "supersedes" in panel and "Python" in panel
        page.fill("#search", "")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "graph.png"))
        assert page.evaluate(OVERLAPS) == []  # no node label covers another (the collision force)
        # a relation that ended: dashed, with its dates, hidden by the toggle
        ended = [e for e in data["edges"] if e["ended"]]
        assert [e["label"] for e in ended] == ["prefers_language"]
        line = page.locator("line.edge.ended")
        assert line.count() == 1 and "ended" in line.locator("title").text_content()
        assert ended[0]["ended"][:10] in line.locator("title").text_content()
        assert page.evaluate("() => getComputedStyle(document.querySelector('line.edge.ended')).strokeDasharray") != "none"
        page.uncheck("#show-ended")
        assert "hidden" in line.get_attribute("class") and page.locator("line.edge-relates.hidden").count() == 1
        page.check("#show-ended")
        # predicates on edges only once zoomed in far enough to read them
        shown = "() => [...document.querySelectorAll('text.edge-label')].filter(t => getComputedStyle(t).display !== 'none').map(t => t.textContent)"
        assert page.locator("g.zoomed-in").count() == 0 and page.evaluate(shown) == []
        box = page.locator("#graph").bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        for _ in range(12):
            if page.locator("g.zoomed-in").count():
                break
            page.mouse.wheel(0, -400)
            page.wait_for_timeout(200)
        labels = page.evaluate(shown)
        assert "works_at" in labels and any(t.startswith("prefers_language (ended 20") for t in labels), labels
        page.evaluate("() => { const s = document.querySelector('#time'); s.value = s.min; s.dispatchEvent(new Event('input')); }")
        assert page.locator("g.node.hidden").count() > len(data["nodes"]) // 2  # later records left the picture
        assert errors == []
        b.close()


def test_ui_and_graph_routes_on_a_live_server_with_keys(tmp_path):
    server = Live("embedded", tmp_path)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            http.post("/v1/memories", params={"namespace": "a"}, json={"text": "Ana prefers oolong", "subject": "Ana"})
            http.post("/v1/memories", params={"namespace": "b"}, json={"text": "B's vault code is 7431", "subject": "vault"})
            assert "graphmem" in http.get("/ui").text
        key = cli(server.env, "keys", "create", "--namespace", "a").stdout.split()[-1]
        with httpx.Client(base_url=server.url, timeout=60, headers={"Authorization": f"Bearer {key}"}) as http:
            data = http.get("/v1/graph").json()
            assert data["namespace"] == "a" and "7431" not in without_ids(json.dumps(data))
            assert http.get("/v1/graph", params={"namespace": "b"}).status_code == 403
        manager, chromium = browser()
        with manager as p:
            b, page, errors = open_page(p, chromium, server.url + "/ui")
            page.fill("#key", key)
            page.click("#connect button")
            page.wait_for_selector("g.node-memory", state="attached")
            assert "Ana prefers oolong" in page.text_content("svg") and "7431" not in without_ids(page.content())
            assert [e for e in errors if "401" not in e] == []  # the first, keyless fetch is refused: expected
            b.close()
    finally:
        log = server.stop()
    assert "Traceback" not in log, log


def test_artifact_folder_is_ignored_by_git():
    ignored = subprocess.run(["git", "check-ignore", "-q", "test-artifacts/graph.png"], cwd=ROOT)
    assert ignored.returncode == 0, "test-artifacts/ should be in .gitignore"
    assert sys.executable
