#!/usr/bin/env node
// `npm test`: unit tests (vitest) then browser e2e (Playwright in Debian's Chromium), and one
// closing line `N passed, N failed, N skipped` that adds both up, so every run says what it ran.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { withCompilerCache } from "./compiler-cache.mjs";

const results = "test-results";
mkdirSync(results, { recursive: true });
const unitJson = `${results}/unit.json`;
const e2eJson = `${results}/e2e.json`;
rmSync(unitJson, { force: true });
rmSync(e2eJson, { force: true });

// The real llama.cpp build test compiles through ccache where it is installed, hitting what
// set-up compiled (scripts/compiler-cache.mjs).
const env = withCompilerCache(process.env, dirname(dirname(fileURLToPath(import.meta.url))));

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: "inherit", env });
  return r.status ?? 1;
}

// Which llama.cpp binaries the engine tests load: set-up builds them for this machine when it can
// (electron/core/engine/native-cache.ts writes the marker), else node-llama-cpp's prebuilt ones.
function engineBanner(llama = "node_modules/node-llama-cpp/llama") {
  try {
    const { folderName } = JSON.parse(readFileSync(`${llama}/lastBuild.json`, "utf8"));
    if (!existsSync(`${llama}/localBuilds/${folderName}/buildDone.status`))
      return "engine: prebuilt binaries";
    const marker = existsSync(`${llama}/localBuilds/.macaron-build.json`)
      ? JSON.parse(readFileSync(`${llama}/localBuilds/.macaron-build.json`, "utf8"))
      : null;
    const backend = marker === null ? folderName : marker.gpu === false ? "cpu" : "gpu auto";
    return `engine: llama.cpp built for this machine (${backend}, ${marker?.key ?? "built by hand"})`;
  } catch {
    return "engine: prebuilt binaries";
  }
}
console.log(engineBanner());

const only = process.argv[2]; // "unit" | "e2e" | undefined
const totals = { passed: 0, failed: 0, skipped: 0 };
let crashed = false;

if (only !== "e2e") {
  const code = run("npx", [
    "vitest",
    "run",
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${unitJson}`,
  ]);
  if (existsSync(unitJson)) {
    const r = JSON.parse(readFileSync(unitJson, "utf8"));
    totals.passed += r.numPassedTests;
    totals.failed += r.numFailedTests;
    totals.skipped += r.numPendingTests + r.numTodoTests;
    if (code !== 0 && r.numFailedTests === 0) crashed = true;
  } else crashed = true;
}

if (only !== "unit") {
  const code = run("npx", ["playwright", "test"]);
  if (existsSync(e2eJson)) {
    const s = JSON.parse(readFileSync(e2eJson, "utf8")).stats;
    totals.passed += s.expected + (s.flaky ?? 0);
    totals.failed += s.unexpected;
    totals.skipped += s.skipped;
    if (code !== 0 && s.unexpected === 0) crashed = true;
    if (s.unexpected > 0) printPageSnapshots();
  } else crashed = true;
}

// A failed e2e test's page as Playwright saw it last (its ARIA snapshot): CI keeps only this log.
function printPageSnapshots(dir = `${results}/playwright`, maxLines = 300) {
  if (!existsSync(dir)) return;
  for (const test of readdirSync(dir)) {
    const file = `${dir}/${test}/error-context.md`;
    if (!existsSync(file)) continue;
    // The snapshot only: the error itself is already in Playwright's report above.
    const all = readFileSync(file, "utf8").split("\n");
    const lines = all.slice(
      Math.max(
        0,
        all.findIndex((l) => l.startsWith("```yaml")),
      ),
    );
    console.log(
      `--- page at the failure: ${file} (${Math.min(lines.length, maxLines)} of ${lines.length} lines) ---`,
    );
    console.log(lines.slice(0, maxLines).join("\n"));
  }
}

if (crashed) console.log("a test runner failed before reporting all its results (see above)");
console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(totals.failed > 0 || crashed ? 1 : 0);
