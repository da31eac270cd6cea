// Starts a live `graphmem serve` on loopback (a fresh store in a temp folder), then either
// regenerates src/schema.ts from its OpenAPI schema (`generate`) or checks that schema.ts is
// current and runs the tests against it (`test`). No mock server anywhere.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const bin = process.env.GRAPHMEM_BIN ?? resolve(here, "../../.venv/bin/graphmem");
const mode = process.argv[2];

const port = await new Promise((ok) => {
  const s = createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => ok(p)); });
});
const tmp = mkdtempSync(join(tmpdir(), "graphmem-ts-"));
const env = {
  ...process.env, GRAPHMEM_PATH: join(tmp, "graphmem.db"), GRAPHMEM_KEYS_PATH: join(tmp, "keys.db"),
  GRAPHMEM_EXTRACTION: "manual", GRAPHMEM_BIN: bin, GRAPHMEM_URL: `http://127.0.0.1:${port}`,
};
const server = spawn(bin, ["serve", "--port", String(port), "--log-level", "warning"], { env, stdio: ["ignore", "inherit", "inherit"] });
let code = 1;
try {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try { if ((await fetch(`${env.GRAPHMEM_URL}/health`)).ok) break; } catch { /* not up yet */ }
    if (server.exitCode !== null || Date.now() > deadline) throw new Error(`graphmem serve (${bin}) did not start`);
    await new Promise((r) => setTimeout(r, 300));
  }
  const generate = (out) => spawnSync(join(here, "node_modules/.bin/openapi-typescript"),
    [`${env.GRAPHMEM_URL}/openapi.json`, "--default-non-nullable", "false", "-o", out], { cwd: here, stdio: "inherit" }).status;
  if (mode === "generate") {
    code = generate("src/schema.ts");
  } else {
    const fresh = join(tmp, "schema.ts");
    if (generate(fresh) !== 0) throw new Error("openapi-typescript failed");
    if (readFileSync(fresh, "utf8") !== readFileSync(join(here, "src/schema.ts"), "utf8")) {
      throw new Error("src/schema.ts is not what the live server's OpenAPI schema gives: run `npm run generate`");
    }
    console.log("src/schema.ts matches the live server's OpenAPI schema");
    code = spawnSync(process.execPath, ["--test", "--test-concurrency=1", "test/"], { cwd: here, env, stdio: "inherit" }).status ?? 1;
  }
} catch (err) {
  console.error(String(err));
} finally {
  // the store is closed as the server exits (its WAL checkpointed): wait for that before the
  // folder goes, or the checkpoint finds its files gone ("disk I/O error")
  const exited = server.exitCode !== null ? Promise.resolve() : new Promise((r) => server.once("exit", r));
  server.kill("SIGTERM");
  const killer = setTimeout(() => server.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(killer);
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(code);
