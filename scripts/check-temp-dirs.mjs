// `npm run lint`'s last part: tests take their temporary folders from testing/core/temp-dir.ts
// (`testDir`, `suiteDir`, removed by vitest hooks; `tempDir` when the caller removes it), so
// every folder is removed after what was opened in it and no test keeps its own cleanup list.
// A test file (`*.test.ts`, `*.test.tsx`) that calls mkdtemp or mkdtempSync itself, or imports
// either from node:fs, fails, unless it carries the marker `// temp-dir: own <reason>` saying why
// the helper does not fit (a folder another process must own, one that outlives the test
// process, a tmpfs mounted at collection).
// Arguments: the files to check (default: every tracked test file).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const TEST_FILE = /\.test\.tsx?$/;
/** The marker, with a reason after it (at least one word). */
const MARKER = /\/\/[ \t]*temp-dir:[ \t]*own\b[ \t:—–-]*\w/;
const CALL = /\bmkdtemp(?:Sync)?\s*\(/g;
const IMPORT = /\bimport\s*\{[^}]*\bmkdtemp(?:Sync)?\b[^}]*\}\s*from\s*["'](?:node:)?fs(?:\/promises)?["']/g;

/** Whether `path` (relative to the repository root, with slashes) is a test file this check reads. */
export function isTestFile(path) {
  return TEST_FILE.test(path);
}

/** Whether the text carries the marker `// temp-dir: own <reason>`. */
export function hasOwnMarker(text) {
  return MARKER.test(text);
}

/** Its own temp folders in a test file's text: each call or import's 1-based line and words. */
export function ownTempDirs(text) {
  const hits = [];
  for (const re of [IMPORT, CALL]) {
    for (const m of text.matchAll(re)) {
      const line = text.slice(0, m.index).split("\n").length;
      hits.push({ line, match: m[0].replace(/\s+/g, " ") });
    }
  }
  return hits.sort((a, b) => a.line - b.line);
}

function main() {
  const files =
    process.argv.slice(2).length > 0
      ? process.argv.slice(2)
      : execFileSync("git", ["ls-files"], { encoding: "utf8" }).split("\n").filter(Boolean);
  const found = [];
  for (const file of files) {
    if (!isTestFile(file)) continue;
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue; // Deleted in the work tree.
    }
    if (hasOwnMarker(text)) continue;
    for (const hit of ownTempDirs(text)) found.push(`${file}:${hit.line}: ${hit.match}`);
  }
  for (const line of found) process.stderr.write(`${line}\n`);
  if (found.length > 0) {
    process.stderr.write(
      `${found.length} temp folder(s) made by a test itself: use testDir or suiteDir from testing/core/temp-dir.ts, or say why not with "// temp-dir: own <reason>".\n`,
    );
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
