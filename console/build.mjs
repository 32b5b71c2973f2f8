// Builds the console into ../kyma/console/static (committed: `kyma serve` needs no npm) and
// records a hash of the sources there (BUILD.json), which tests/console/test_bundle.py checks.
//   npm ci && npm run build

import { build } from "esbuild";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "kyma", "console", "static");
const SOURCES = ["build.mjs", "package.json", "package-lock.json", "src"];

function files(path) {
  try {
    return readdirSync(path, { withFileTypes: true }).flatMap((e) => files(join(path, e.name)));
  } catch {
    return [path];
  }
}

/** sha256 over each source file's path and bytes, in path order (tests/console recomputes it). */
export function sourcesHash() {
  const hash = createHash("sha256");
  const all = SOURCES.flatMap((s) => files(join(here, s))).map((f) => relative(here, f)).sort();
  for (const name of all) {
    hash.update(`${name}\n`);
    hash.update(readFileSync(join(here, name)));
    hash.update("\n");
  }
  return hash.digest("hex");
}

mkdirSync(out, { recursive: true });
await build({
  entryPoints: { console: join(here, "src", "main.js") },
  bundle: true,
  minify: true,
  format: "esm",
  target: ["chrome110", "firefox110", "safari16"],
  outdir: out,
  legalComments: "eof",
  logLevel: "warning",
});
copyFileSync(join(here, "src", "index.html"), join(out, "index.html"));
const outputs = {};
for (const name of ["console.js", "console.css", "index.html"]) {
  outputs[name] = createHash("sha256").update(readFileSync(join(out, name))).digest("hex");
}
writeFileSync(join(out, "BUILD.json"), JSON.stringify({ sources_sha256: sourcesHash(), outputs }, null, 2) + "\n");
console.log(`console built into ${relative(process.cwd(), out)}`);
