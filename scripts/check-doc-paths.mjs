// `npm run lint`'s third part: every path of ours that the docs name exists. A doc names a path
// as `folder/file.ext` or `folder/sub/` (in backticks, links or plain text); the first folder
// must be one of the repository's own, so URLs, API routes and generated output are not read
// as paths. Generated folders (bench/results, out, test-results) are skipped.
// Paths inside fenced code blocks are a user's (command examples), and paths git ignores are
// generated (a trained adapter, a results file): neither is checked. A module may be named
// without its extension (`native/engine/tool-schema`).
// Arguments: the docs to check (default: every tracked *.md).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

const ROOTS = [
  "adapters",
  "bench",
  "cloud",
  "common",
  "docs",
  "e2e",
  "electron",
  "native",
  "renderer",
  "resources",
  "scripts",
  "testing",
];
const GENERATED = /^(bench\/results|out|test-results|release|dist)\//;
// A path: a root folder, then segments of word characters, dots and dashes; optionally a trailing
// slash. Globs (`*`), placeholders (`<id>`, `…`) and `{a,b}` alternatives end the match.
const PATH = new RegExp(`(?<![\\w./-])((?:${ROOTS.join("|")})/[\\w.@-]+(?:/[\\w.@-]+)*/?)`, "g");

const docs =
  process.argv.slice(2).length > 0
    ? process.argv.slice(2)
    : execFileSync("git", ["ls-files", "*.md"], { encoding: "utf8" }).split("\n").filter(Boolean);

const missing = [];
for (const doc of docs) {
  const lines = readFileSync(doc, "utf8").split("\n");
  let fenced = false;
  lines.forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) return;
    for (const m of line.matchAll(PATH)) {
      const path = m[1].replace(/[.,:;)]+$/, "");
      if (GENERATED.test(path)) continue;
      // A glob or placeholder right after the match: the named folder is what must exist.
      const next = line[m.index + m[1].length];
      const checked = next === "*" || next === "<" || next === "{" ? path.replace(/[^/]*$/, "") : path;
      const candidates = [checked, `${checked}.ts`, `${checked}.tsx`, `${checked}.md`].flatMap((p) => [
        p,
        join(dirname(doc), p),
      ]);
      if (candidates.some((p) => existsSync(p))) continue;
      if (spawnSync("git", ["check-ignore", "-q", checked]).status === 0) continue;
      missing.push(`${doc}:${i + 1}: ${path} does not exist`);
    }
  });
}
for (const line of missing) process.stderr.write(`${line}\n`);
if (missing.length > 0) {
  process.stderr.write(`${missing.length} stale path(s) in the docs: fix the doc or the path.\n`);
  process.exitCode = 1;
}
