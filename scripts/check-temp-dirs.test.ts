import { describe, expect, it } from "vitest";
import { hasOwnMarker, isTestFile, ownTempDirs } from "./check-temp-dirs.mjs";

describe("check-temp-dirs", () => {
  it("finds mkdtemp and mkdtempSync calls and imports from node:fs, with their line", () => {
    const text = [
      'import { mkdtempSync, rmSync } from "node:fs";',
      'import { mkdtemp as make } from "fs/promises";',
      'const dir = mkdtempSync(join(tmpdir(), "x-"));',
      "const other = await fs.promises.mkdtemp (prefix);",
    ].join("\n");
    expect(ownTempDirs(text)).toEqual([
      { line: 1, match: 'import { mkdtempSync, rmSync } from "node:fs"' },
      { line: 2, match: 'import { mkdtemp as make } from "fs/promises"' },
      { line: 3, match: "mkdtempSync(" },
      { line: 4, match: "mkdtemp (" },
    ]);
  });

  it("leaves the shared helper's calls and prose alone", () => {
    const text = [
      'import { suiteDir, testDir, tempDir } from "../testing/core/temp-dir";',
      'const dir = testDir("macaron-x-");',
      "// no mkdtemp here: the helper makes the folder",
    ].join("\n");
    expect(ownTempDirs(text)).toEqual([]);
  });

  it("a file is let off only by the marker with a reason", () => {
    expect(hasOwnMarker("// temp-dir: own — the child process owns its folder\nmkdtempSync(p)")).toBe(true);
    expect(hasOwnMarker("// temp-dir: own: a tmpfs mounted at collection")).toBe(true);
    expect(hasOwnMarker("// temp-dir: own\nmkdtempSync(p)")).toBe(false);
    expect(hasOwnMarker("const s = 'temp-dir: own reason'")).toBe(false);
  });

  it("reads test files only", () => {
    expect(isTestFile("cloud/hardening.test.ts")).toBe(true);
    expect(isTestFile("renderer/src/chat/chat.test.tsx")).toBe(true);
    expect(isTestFile("testing/core/temp-dir.ts")).toBe(false);
    expect(isTestFile("e2e/memory.spec.ts")).toBe(false);
  });
});
