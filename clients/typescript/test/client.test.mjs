// The client against a live `graphmem serve` started by scripts/with-server.mjs (GRAPHMEM_URL):
// every method, typed errors with the problem fields, cursor iteration, and API keys made with
// `graphmem keys create` binding the client to its namespace. Tests run in order: the keys come
// last, since the first key ends the server's open mode.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";

import {
  BadRequestError, ConflictError, ForbiddenError, GraphMem, GraphMemError, NotFoundError, UnauthorizedError,
  ValidationError,
} from "@graphmem/client"; // the package itself, through its exports map

const ns = `ts-${process.pid}`;
const open = new GraphMem({ namespace: ns });
const collect = async (iterable) => { const out = []; for await (const x of iterable) out.push(x); return out; };

test("health, readiness and who the client is", async () => {
  const health = await open.health();
  assert.equal(health.status, "ok");
  assert.ok(Number.isInteger(health.pid) && health.pid > 0); // the server process that answered
  assert.equal((await open.ready()).status, "ready");
  assert.deepEqual(await open.whoami(), { namespace: ns, read_only: false, key_id: null });
  assert.deepEqual(await collect(open.memories()), []); // a new tenant is empty
});

test("sessions and turns, paged by cursor", async () => {
  const session = await open.createSession({ id: "s1", user_id: "ana", title: "intro" });
  assert.equal(session.user_id, "ana");
  await assert.rejects(open.createSession({ id: "s1" }), (e) => e instanceof ConflictError && e.status === 409);
  const turns = await open.addMessages("s1", [
    ...Array.from({ length: 4 }, (_, i) => ({ role: "user", content: `turn ${i}: I moved to Lisbon`, speaker: "Ana" })),
    "and I prefer green tea",
  ]);
  assert.deepEqual(turns.map((m) => m.seq), [0, 1, 2, 3, 4]);
  assert.equal((await open.getSession("s1")).message_count, 5);
  const paged = await collect(open.messages("s1", { pageSize: 2 })); // three pages
  assert.deepEqual(paged.map((m) => m.id).sort(), turns.map((m) => m.id).sort());
  assert.deepEqual((await collect(open.sessions({ user_id: "ana" }))).map((s) => s.id), ["s1"]);
});

test("memories: remember, correct with history, list with filters, explain", async () => {
  const tea = await open.remember({ text: "Ana prefers green tea", subject: "Ana", predicate: "prefers_drink", object: "green tea" });
  const oolong = await open.updateMemory(tea.id, { text: "Ana prefers oolong", object: "oolong", reason: "changed her mind" });
  assert.notEqual(oolong.id, tea.id);
  const history = await open.history(oolong.id);
  assert.deepEqual(history.supersedes.map((m) => m.id), [tea.id]);
  assert.equal((await open.explain(tea.id)).status, "superseded");
  assert.deepEqual((await collect(open.memories({ status: "active" }))).map((m) => m.id), [oolong.id]);
  assert.equal((await open.getMemory(oolong.id)).text, "Ana prefers oolong");
  assert.equal((await open.remember("Bo likes chess")).text, "Bo likes chess");
});

test("recall with its breakdown, context in a budget", async () => {
  const hits = await open.recall("what does Ana drink?", { k: 3 });
  assert.equal(hits[0].item.text, "Ana prefers oolong");
  for (const factor of ["relevance", "importance", "confidence", "recency", "frequency"]) {
    assert.equal(typeof hits[0].breakdown[factor], "number");
  }
  assert.ok(hits[0].matched_by.length > 0);
  const turnsOnly = await open.recall("Lisbon", { layers: ["message"] });
  assert.ok(turnsOnly.length > 0 && turnsOnly.every((h) => h.layer === "message"));
  const ctx = await open.context("Ana's drinks", { budget: 200 });
  assert.ok(ctx.text.includes("oolong") && ctx.tokens <= 200);
});

test("entities, episodes, procedures", async () => {
  const [ana] = (await open.findEntities("Ana")).filter((e) => e.name === "Ana");
  assert.ok(ana);
  assert.equal((await open.getEntity("Ana")).id, ana.id);
  const hood = await open.neighbourhood(ana.id, { depth: 2 });
  assert.equal(hood.entity.id, ana.id);
  assert.ok(hood.memories.length > 0);
  const episode = await open.addEpisode({ summary: "Ana told of her move", session_id: "s1" });
  assert.equal((await open.getEpisode(episode.id)).summary, "Ana told of her move");
  assert.deepEqual((await collect(open.episodes({ session_id: "s1" }))).map((e) => e.id), [episode.id]);
  const proc = await open.addProcedure({ task: "brew oolong", steps: ["heat water to 90C", "steep 3 minutes"] });
  assert.deepEqual((await open.getProcedure(proc.id)).steps.map((s) => s.text), ["heat water to 90C", "steep 3 minutes"]);
  assert.deepEqual((await collect(open.procedures())).map((p) => p.id), [proc.id]);
  await assert.rejects(open.getEpisode(proc.id), NotFoundError); // a procedure is not an episode
  assert.equal((await open.nextStep(proc.id, 1)).text, "steep 3 minutes");
  assert.equal(await open.nextStep(proc.id, "steep"), null);
  assert.equal((await open.recordOutcome(proc.id, false, 2)).failure_count, 1);
  assert.deepEqual((await open.procedureSteps(proc.id)).map((s) => s.failure_count), [0, 1]);
  const run = await open.startTrace({ task: "brew a second pot" });
  const step = await open.addStep(run.id, { action: "heat water" });
  await open.addToolCall(step.id, { tool: "kettle", arguments: { celsius: 90 }, duration_ms: 120 });
  const timer = await open.addToolCall(step.id, { tool: "kettle", status: "pending" });
  assert.equal((await open.toolStats())[0].pending, 1);
  const rang = await open.finishToolCall(timer.id, { status: "timeout", duration_ms: 30000 });
  assert.equal(rang.status, "timeout");
  await assert.rejects(open.finishToolCall(timer.id, { status: "success" }), ValidationError); // finished once
  assert.equal((await open.completeTrace(run.id, true, "tea ready")).success, true);
  assert.deepEqual((await open.getTrace(run.id)).steps.map((s) => s.tool_calls.map((c) => c.tool)), [["kettle", "kettle"]]);
  const kettle = (await open.toolStats())[0];
  assert.deepEqual([kettle.tool, kettle.successes, kettle.timeouts, kettle.pending, kettle.success_rate], ["kettle", 1, 1, 0, 0.5]);
  assert.equal((await open.similarTraces("second pot of tea"))[0].trace.id, run.id);
  assert.deepEqual((await collect(open.traces())).map((t) => t.id), [run.id]);
  const graph = await open.graph({ entity: "Ana" });
  assert.ok(graph.nodes.some((n) => n.id === ana.id) && graph.edges.length > 0);
});

test("extraction status and flush, stats, export and import", async () => {
  assert.ok((await open.extractionStatus()).queued >= 1);
  assert.deepEqual(await new GraphMem({ namespace: `${ns}-none` }).flushExtraction(), { windows: [] });
  assert.equal((await open.stats()).memory, 3);
  const lines = await collect(open.export());
  assert.equal(JSON.parse(lines[0]).namespace, ns);
  const copy = new GraphMem({ namespace: `${ns}-copy` });
  const imported = await copy.import(lines);
  assert.equal(imported.namespace, `${ns}-copy`);
  assert.equal((await collect(copy.memories())).length, 3);
});

test("errors are typed and carry the problem fields", async () => {
  const missing = await open.getMemory("mem_missing").catch((e) => e);
  assert.ok(missing instanceof NotFoundError && missing instanceof GraphMemError);
  assert.equal(missing.status, 404);
  assert.match(missing.detail, /mem_missing/);
  assert.equal(missing.instance, "/v1/memories/mem_missing");
  const invalid = await open.recall("", { k: 0 }).catch((e) => e);
  assert.ok(invalid instanceof ValidationError && invalid.errors.length >= 1);
  const cursor = await collect(new GraphMem({ namespace: "bad namespace!" }).memories()).catch((e) => e);
  assert.ok(cursor instanceof ValidationError);
  const bad = await fetch(`${open.baseUrl}/v1/memories?namespace=${ns}&cursor=nope`);
  assert.equal(bad.status, 400); // BadRequestError's status, seen raw
  assert.ok(BadRequestError.prototype instanceof GraphMemError);
  assert.equal((await open.forgetMemory((await open.remember("temporary")).id)).deleted, 1);
  assert.equal((await open.forgetSession("s1")).deleted >= 5, true);
  await assert.rejects(open.getSession("s1"), NotFoundError);
});

test("users inside a namespace: scoped writes, reads, export and forget", async () => {
  const users = new GraphMem({ namespace: `${ns}-users` });
  await users.addMessages("ana-chat", [{ content: "I am vegetarian and live in Porto", user_id: "ana" }]);
  await users.remember({ text: "Bo eats fish every day", user_id: "bo" });
  assert.deepEqual((await collect(users.memories({ user_id: "bo" }))).map((m) => m.text), ["Bo eats fish every day"]);
  const hits = await users.recall("where does the user live?", { user_id: "ana" });
  assert.ok(hits.length > 0 && hits.every((h) => [undefined, null, "ana"].includes(h.item.user_id)));
  assert.ok(!(await collect(users.export({ user_id: "bo" }))).join("\n").includes("Porto"));
  assert.equal((await users.forgetScope({ user_id: "ana" })).deleted, 2); // her session and turn
  assert.deepEqual(await collect(users.messages("ana-chat")), []);
});

test("API keys bind the client to its namespace", async () => {
  const cli = (...args) => execFileSync(process.env.GRAPHMEM_BIN, args, { env: process.env, encoding: "utf8" });
  const aKey = cli("keys", "create", "--namespace", `${ns}-a`).trim().split("\n").pop();
  const roKey = cli("keys", "create", "--namespace", `${ns}-a`, "--read-only").trim().split("\n").pop();
  const a = new GraphMem({ apiKey: aKey });
  assert.equal((await a.whoami()).namespace, `${ns}-a`);
  const mine = await a.remember("A likes chess");
  assert.equal(mine.namespace, `${ns}-a`);
  await assert.rejects(new GraphMem().stats(), UnauthorizedError); // keys exist now: no key, no answer
  await assert.rejects(new GraphMem({ apiKey: aKey, namespace: ns }).stats(), ForbiddenError); // never another's
  await assert.rejects(a.getMemory((await collect(new GraphMem({ apiKey: aKey }).memories()))[0].id + "x"), NotFoundError);
  const ro = new GraphMem({ apiKey: roKey });
  assert.equal((await ro.recall("chess"))[0].item.id, mine.id);
  await assert.rejects(ro.remember("read-only writes"), ForbiddenError);
  const admin = new GraphMem({ apiKey: cli("keys", "create", "--admin").trim().split("\n").pop() });
  const made = await admin.createKey({ namespace: `${ns}-b`, label: "made over REST" });
  assert.equal((await new GraphMem({ apiKey: made.token }).whoami()).namespace, `${ns}-b`);
  assert.ok((await admin.listKeys()).some((k) => k.id === made.key.id));
  await assert.rejects(admin.stats(), ForbiddenError); // an admin key reaches no namespace
  await assert.rejects(a.listKeys(), ForbiddenError); // a tenant's key manages no keys
  assert.ok((await admin.revokeKey(made.key.id)).revoked_at);
  await assert.rejects(new GraphMem({ apiKey: made.token }).whoami(), UnauthorizedError);
});
