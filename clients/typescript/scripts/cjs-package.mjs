// dist/cjs holds the CommonJS build of a package whose own "type" is "module": this file tells
// Node (and TypeScript's node16/nodenext resolution) that the .js and .d.ts files there are CommonJS.
import { writeFileSync } from "node:fs";

writeFileSync(new URL("../dist/cjs/package.json", import.meta.url), JSON.stringify({ type: "commonjs" }) + "\n");
