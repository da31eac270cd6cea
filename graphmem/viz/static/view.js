// graphmem's graph view: one self-contained page (d3 is inlined beside this file). The data is
// either embedded (graphmem viz) or fetched from /v1/graph with an API key (graphmem serve /ui).
(function () {
  "use strict";
  const KIND_COLOR = { entity: "#2f6fb0", memory: "#e08a1e", episode: "#3a9a5b", procedure: "#8a4fbf", step: "#b98ad9",
    session: "#777", message: "#b0b0b0" };
  const EDGE_CLASS = { SUPERSEDES: "supersedes", MERGED_INTO: "merged", DERIVED_FROM: "derived", MENTIONS: "mentions",
    RELATES_TO: "relates", PRODUCED: "produced", NEXT: "chain", FIRST_STEP: "chain", COVERS: "derived",
    HAS_MESSAGE: "derived", SAID: "mentions" };
  const ZOOMED_IN = 1.5; // the zoom from which edges show their predicates
  const $ = (sel) => document.querySelector(sel);
  const esc = (s) => String(s ?? "").replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

  function draw(data) {
    const svg = d3.select("#graph");
    svg.selectAll("*").remove();
    const width = svg.node().clientWidth || 1000, height = svg.node().clientHeight || 700;
    const nodes = data.nodes.map((n) => ({ ...n }));
    const byId = new Map(nodes.map((n) => [n.id, n]));
    const links = data.edges.filter((e) => byId.has(e.source) && byId.has(e.target)).map((e) => ({ ...e }));
    $("#counts").textContent = `${nodes.length} nodes, ${links.length} edges` + (data.total ? ` (${data.total} records in ${data.namespace})` : "");
    $("#note").textContent = data.note || "";
    $("#note").hidden = !data.note;

    // each label is measured first: a node keeps a circle around it as wide as its label (centred
    // under the node), so the collision force leaves no two labels on top of each other
    const probe = svg.append("text").attr("class", "measure").style("font-size", "10px");
    for (const n of nodes) {
      n.short = n.label.length > 40 ? n.label.slice(0, 37) + "..." : n.label;
      n.w = probe.text(n.short).node().getComputedTextLength() || n.short.length * 6;
    }
    probe.remove();
    const sim = d3.forceSimulation(nodes)
      .force("link", d3.forceLink(links).id((d) => d.id).distance((l) => (l.type === "MENTIONS" ? 70 : 45)))
      .force("charge", d3.forceManyBody().strength(-120))
      .force("center", d3.forceCenter(width / 2, height / 2))
      .force("x", d3.forceX(width / 2).strength(0.06)).force("y", d3.forceY(height / 2).strength(0.06))
      .force("collide", d3.forceCollide((n) => n.w / 2 + 10).strength(1).iterations(4))
      .stop();
    for (let i = 0; i < 400; i++) sim.tick(); // a settled layout, the same every time

    const root = svg.append("g");
    const zoom = d3.zoom().scaleExtent([0.05, 8]).on("zoom", (ev) => {
      root.attr("transform", ev.transform);
      root.classed("zoomed-in", ev.transform.k >= ZOOMED_IN); // predicates on edges once they can be read
    });
    svg.call(zoom);
    if (nodes.length) { // the whole graph in view
      const [x0, x1] = d3.extent(nodes, (n) => n.x), [y0, y1] = d3.extent(nodes, (n) => n.y);
      const k = Math.min(2, 0.9 / Math.max((x1 - x0 + 80) / width, (y1 - y0 + 40) / height));
      svg.call(zoom.transform, d3.zoomIdentity.translate(width / 2, height / 2).scale(k)
        .translate(-(x0 + x1) / 2 - 40, -(y0 + y1) / 2));
    }
    svg.append("defs").append("marker").attr("id", "arrow").attr("viewBox", "0 -4 8 8").attr("refX", 16)
      .attr("markerWidth", 6).attr("markerHeight", 6).attr("orient", "auto")
      .append("path").attr("d", "M0,-4L8,0L0,4").attr("fill", "#999");
    const day = (t) => (t ? String(t).slice(0, 10) : "");
    const when = (d) => (d.ended ? ` (${day(d.since) || "?"} to ${day(d.ended)}, ended)` : d.since ? ` (since ${day(d.since)})` : "");
    const edge = root.append("g").selectAll("line").data(links).join("line")
      .attr("class", (d) => `edge edge-${EDGE_CLASS[d.type] || "other"}` + (d.ended ? " ended" : ""))
      .attr("data-type", (d) => d.type)
      .attr("marker-end", "url(#arrow)")
      .attr("x1", (d) => d.source.x).attr("y1", (d) => d.source.y).attr("x2", (d) => d.target.x).attr("y2", (d) => d.target.y);
    edge.append("title").text((d) => d.type + (d.label ? `: ${d.label}` : "") + when(d));
    const edgeLabel = root.append("g").selectAll("text").data(links.filter((l) => l.label)).join("text")
      .attr("class", (d) => "edge-label" + (d.ended ? " ended" : ""))
      .attr("x", (d) => (d.source.x + d.target.x) / 2).attr("y", (d) => (d.source.y + d.target.y) / 2 - 2)
      .text((d) => d.label + (d.ended ? ` (ended ${day(d.ended)})` : ""));
    const node = root.append("g").selectAll("g").data(nodes).join("g")
      .attr("class", (d) => `node node-${d.kind}` + (d.status && d.status !== "active" ? ` status-${d.status}` : ""))
      .attr("data-id", (d) => d.id).attr("data-kind", (d) => d.kind)
      .attr("transform", (d) => `translate(${d.x},${d.y})`)
      .on("click", (ev, d) => select(d));
    node.append("circle").attr("r", (d) => (d.kind === "entity" ? 9 : d.kind === "step" ? 5 : 7))
      .attr("fill", (d) => KIND_COLOR[d.kind] || "#444");
    node.append("text").attr("class", "node-label").attr("text-anchor", "middle").attr("y", 19).text((d) => d.short);

    // what the controls change: search, turns on demand, the time slider
    const times = nodes.map((n) => Date.parse(n.time)).filter((t) => !Number.isNaN(t));
    const slider = $("#time");
    slider.min = Math.min(...times, Date.now());
    slider.max = Math.max(...times, 0);
    slider.value = slider.max;
    const hasMessages = nodes.some((n) => n.kind === "message");
    $("#messages-box").hidden = !hasMessages;
    function apply() {
      const q = $("#search").value.trim().toLowerCase();
      const until = Number(slider.value);
      const showMessages = $("#show-messages").checked;
      $("#time-label").textContent = new Date(until).toISOString().slice(0, 16).replace("T", " ");
      node.classed("hidden", (d) => Date.parse(d.time) > until || (d.kind === "message" && !showMessages));
      node.classed("hit", (d) => q !== "" && d.label.toLowerCase().includes(q));
      node.classed("dim", (d) => q !== "" && !d.label.toLowerCase().includes(q));
      const hidden = new Set(node.filter(".hidden").data().map((d) => d.id));
      const gone = (d) => hidden.has(d.source.id) || hidden.has(d.target.id) || (d.ended && !$("#show-ended").checked);
      edge.classed("hidden", gone);
      edgeLabel.classed("hidden", gone);
    }
    $("#ended-box").hidden = !links.some((l) => l.ended);
    $("#search").oninput = apply;
    slider.oninput = apply;
    $("#show-messages").onchange = apply;
    $("#show-ended").onchange = apply;
    apply();

    function select(d) {
      node.classed("selected", (n) => n.id === d.id);
      const rows = Object.entries(d.fields || {}).filter(([, v]) => v !== null && v !== "" && !(Array.isArray(v) && !v.length))
        .map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(typeof v === "object" ? JSON.stringify(v) : v)}</td></tr>`).join("");
      const factors = d.factors ? Object.entries(d.factors).map(([k, v]) =>
        `<div class="factor"><span>${esc(k)}</span><span class="bar" style="width:${Math.round(v * 120)}px"></span>${v.toFixed(2)}</div>`).join("") : "";
      const history = links.filter((l) => (l.type === "SUPERSEDES" || l.type === "MERGED_INTO") && (l.source.id === d.id || l.target.id === d.id))
        .map((l) => l.source.id === d.id ? `<li>${l.type === "SUPERSEDES" ? "supersedes" : "merged into"}: ${esc(l.target.label)}</li>`
          : `<li>${l.type === "SUPERSEDES" ? "superseded by" : "merged from"}: ${esc(l.source.label)}</li>`).join("");
      $("#panel").innerHTML = `<h2>${esc(d.kind)}</h2><p class="label">${esc(d.label)}</p>` +
        (factors ? `<h3>score factors (relevance aside)</h3>${factors}` : "") +
        (history ? `<h3>history</h3><ul>${history}</ul>` : "") + `<h3>fields</h3><table>${rows}</table>`;
    }
  }

  async function fetchGraph(ev) {
    ev && ev.preventDefault();
    const key = $("#key").value.trim();
    if (key) sessionStorage.setItem("graphmem-key", key);
    const params = new URLSearchParams();
    for (const name of ["namespace", "entity"]) if ($(`#${name}`).value.trim()) params.set(name, $(`#${name}`).value.trim());
    if ($("#want-messages").checked) params.set("messages", "true");
    const response = await fetch(`${location.pathname.replace(/\/ui\/?$/, "")}/v1/graph?${params}`,
      { headers: key ? { Authorization: `Bearer ${key}` } : {} });
    const body = await response.json();
    if (!response.ok) { $("#note").hidden = false; $("#note").textContent = `${body.title}: ${body.detail}`; return; }
    draw(body);
  }

  const embedded = document.getElementById("graph-data");
  if (embedded) {
    draw(JSON.parse(embedded.textContent));
  } else {
    $("#connect").hidden = false;
    $("#key").value = sessionStorage.getItem("graphmem-key") || "";
    $("#connect").onsubmit = fetchGraph;
    fetchGraph();
  }
})();
