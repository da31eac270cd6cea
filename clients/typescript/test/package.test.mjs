// The package as a user gets it: `npm pack` makes the tarball, a fresh project installs it (no
// registry needed: the client has no runtime dependencies), and it is used from an ES module,
// from CommonJS (`require`), and type-checked from TypeScript in both module systems.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const here = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

test("npm pack gives a tarball a fresh project installs and uses from ESM, CommonJS and TypeScript", () => {
  const tmp = mkdtempSync(join(tmpdir(), "graphmem-pack-"));
  try {
    const packed = JSON.parse(execFileSync(npm, ["pack", "--json", "--pack-destination", tmp], { cwd: here, encoding: "utf8" }));
    const files = packed[0].files.map((f) => f.path);
    for (const f of ["dist/esm/index.js", "dist/esm/index.d.ts", "dist/cjs/index.js", "dist/cjs/index.d.ts",
      "dist/cjs/package.json", "README.md"]) assert.ok(files.includes(f), `${f} is not in the tarball`);
    const app = join(tmp, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "fresh-app", version: "1.0.0", private: true }));
    execFileSync(npm, ["install", "--no-audit", "--no-fund", "--offline", join(tmp, packed[0].filename)], { cwd: app });
    const use = "(await new GraphMem().health()).status";
    writeFileSync(join(app, "esm.mjs"), `import { GraphMem } from "@graphmem/client";\nconsole.log(${use});\n`);
    writeFileSync(join(app, "cjs.cjs"), `const { GraphMem, NotFoundError } = require("@graphmem/client");\n` +
      `(async () => console.log(${use}, typeof NotFoundError))();\n`);
    const run = (file) => execFileSync(process.execPath, [file], { cwd: app, env: process.env, encoding: "utf8" }).trim();
    assert.equal(run("esm.mjs"), "ok");
    assert.equal(run("cjs.cjs"), "ok function");
    const typed = "const mem = new GraphMem({ baseUrl: 'http://127.0.0.1:8765' });\n" +
      "export async function drinks(): Promise<string[]> {\n" +
      "  return (await mem.recall('what does Ana drink?', { k: 3 })).map((h: ScoredItem) => h.item.id);\n}\n";
    writeFileSync(join(app, "use.mts"), `import { GraphMem, type ScoredItem } from "@graphmem/client";\n${typed}`);
    writeFileSync(join(app, "use.cts"), `import { GraphMem, type ScoredItem } from "@graphmem/client";\n${typed}`);
    writeFileSync(join(app, "wrong.mts"), `import { GraphMem } from "@graphmem/client";\nnew GraphMem().recal("x");\n`);
    const tsc = (...files) => {
      try {
        execFileSync(join(here, "node_modules/.bin/tsc"), ["--noEmit", "--strict", "--module", "nodenext",
          "--moduleResolution", "nodenext", "--target", "es2022", "--lib", "es2022,dom", ...files], { cwd: app, encoding: "utf8" });
        return "";
      } catch (e) { return String(e.stdout); }
    };
    assert.equal(tsc("use.mts", "use.cts"), ""); // the types resolve in both module systems
    assert.match(tsc("wrong.mts"), /Property 'recal' does not exist on type 'GraphMem'/); // and they are checked
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
