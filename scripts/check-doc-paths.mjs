// `npm run lint`'s third part: every path of ours that the docs name exists. A doc names a path
// (in backticks, links or plain text) in one of three ways, each checked:
// - from the root, `folder/file.ext` or `folder/sub/`: the first folder must be one of the
//   repository's own, so URLs, API routes and generated output are not read as paths;
// - relative, `./scripts/x.mjs` or `../electron/main/`: from the doc's folder or from the root
//   (a command run there), and only inside the repository;
// - a bare file name, `vitest.config.ts`: one of our source or doc files (.ts, .tsx, .mts, .cts,
//   .mjs, .cjs, .md) must exist at the root, beside the doc, or as some tracked file's name (docs
//   name a module by its file name); another file (.json, .js, .yml) only when it shares its
//   first name part with a root file (`tsconfig.nod.json`, `package.jsn` is no file name at all),
//   since the docs also name other programs' files (`adapter_config.json`) and files made at run
//   time (`index.json`). Name another project's source file with its project in front.
// Generated folders (bench/results, out, test-results) are skipped. Paths inside fenced code
// blocks are a user's (command examples), paths git ignores are generated (a trained adapter, a
// results file), and a path is cut at a glob (`*`), a placeholder (`<id>`, `…`) or `{a,b}` (then
// the folder before it is what must exist): none of these is checked as a whole. A module may be
// named without its extension (`native/engine/tool-schema`).
// Arguments: the docs to check (default: every tracked *.md).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { pathToFileURL } from "node:url";

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
// A path's segments: word characters, dots, dashes and @; optionally a trailing slash. Globs
// (`*`), placeholders (`<id>`, `…`) and `{a,b}` alternatives end the match.
const SEGMENTS = "[\\w.@-]+(?:/[\\w.@-]+)*/?";
const NOT_AFTER = "(?<![\\w./@-])";
/** A path from the root: one of ROOTS, then its segments. */
const PATH = new RegExp(`${NOT_AFTER}((?:${ROOTS.join("|")})/${SEGMENTS})`, "g");
/** A relative path: `./` or `../` (repeated), then segments. */
const RELATIVE = new RegExp(`${NOT_AFTER}((?:\\.\\.?/)+${SEGMENTS})`, "g");
/** A file name without a folder, of an extension the bare-name rule reads. */
const BARE =
  /(?<![\w./@<>{}*$-])([\w@][\w.@-]*\.(?:ts|tsx|mts|cts|mjs|cjs|md|json|js|yml|yaml))(?![\w/@*<>{}-]|\.\w)/g;
/** Our source and doc files: a bare name of one of these must be a file of ours. */
const OUR_EXTENSIONS = /\.(ts|tsx|mts|cts|mjs|cjs|md)$/;

/**
 * What a check reads of the repository: whether a path (from the root) exists, whether git
 * ignores it, the names of the tracked files and the root's files.
 */
/** @typedef {{ exists: (path: string) => boolean, ignored: (path: string) => boolean, trackedNames: ReadonlySet<string>, rootFiles: readonly string[] }} Repo */

/** The first part of a file name: `vitest` of `vitest.config.ts`. */
const firstPart = (name) => name.split(".")[0].toLowerCase();

/**
 * The stale paths of one doc (`doc`: its path from the root; `text`: its contents): each with
 * its 1-based line and the path as written.
 * @param {string} doc
 * @param {string} text
 * @param {Repo} repo
 */
export function stalePaths(doc, text, repo) {
  const found = [];
  const docDir = dirname(doc);
  // A path (from the root) that exists, with or without a module's extension.
  const existing = (path) => ["", ".ts", ".tsx", ".md"].some((ext) => repo.exists(`${path}${ext}`));
  // What must exist of a match: the folder before a glob or placeholder right after it.
  const checkedPart = (line, m) => {
    const path = m[1].replace(/[.,:;)]+$/, "");
    const next = line[m.index + m[1].length];
    return {
      path,
      checked: next === "*" || next === "<" || next === "{" ? path.replace(/[^/]*$/, "") : path,
    };
  };
  const rootFirstParts = new Set(repo.rootFiles.map(firstPart));
  let fenced = false;
  text.split("\n").forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) return;
    const stale = (path) => found.push({ line: i + 1, path });
    for (const m of line.matchAll(PATH)) {
      const { path, checked } = checkedPart(line, m);
      if (GENERATED.test(path)) continue;
      if (existing(checked) || existing(join(docDir, checked)) || repo.ignored(checked)) continue;
      stale(path);
    }
    for (const m of line.matchAll(RELATIVE)) {
      const { path, checked } = checkedPart(line, m);
      // From the doc's folder, or from the root; a path that leaves the repository is not ours.
      const candidates = [join(docDir, checked), normalize(checked)].filter(
        (p) => p !== ".." && !p.startsWith("../"),
      );
      if (candidates.length === 0) continue;
      const rel = (p) => p.replace(/^\.\/?/, "") || ".";
      if (candidates.some((p) => GENERATED.test(rel(p)) || existing(rel(p)) || repo.ignored(rel(p))))
        continue;
      stale(path);
    }
    for (const m of line.matchAll(BARE)) {
      const name = m[1];
      if (!OUR_EXTENSIONS.test(name) && !rootFirstParts.has(firstPart(name))) continue;
      if (repo.trackedNames.has(name) || repo.exists(name) || repo.exists(join(docDir, name))) continue;
      if (repo.ignored(name)) continue;
      stale(name);
    }
  });
  return found;
}

/** The repository in the current folder, as stalePaths reads it. */
export function gitRepo() {
  const tracked = execFileSync("git", ["ls-files"], { encoding: "utf8" }).split("\n").filter(Boolean);
  return {
    exists: (path) => existsSync(path),
    ignored: (path) => spawnSync("git", ["check-ignore", "-q", path]).status === 0,
    trackedNames: new Set(tracked.map((p) => p.slice(p.lastIndexOf("/") + 1))),
    rootFiles: tracked.filter((p) => !p.includes("/")),
  };
}

function main() {
  const docs =
    process.argv.slice(2).length > 0
      ? process.argv.slice(2)
      : execFileSync("git", ["ls-files", "*.md"], { encoding: "utf8" }).split("\n").filter(Boolean);
  const repo = gitRepo();
  const missing = [];
  for (const doc of docs) {
    for (const { line, path } of stalePaths(doc, readFileSync(doc, "utf8"), repo))
      missing.push(`${doc}:${line}: ${path} does not exist`);
  }
  for (const line of missing) process.stderr.write(`${line}\n`);
  if (missing.length > 0) {
    process.stderr.write(`${missing.length} stale path(s) in the docs: fix the doc or the path.\n`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
