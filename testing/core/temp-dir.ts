/**
 * Temporary folders for tests. `testDir` (in a test or a beforeEach) and `suiteDir` (at a file's
 * or describe block's top level) remove their folder by themselves; `tempDir` hands the removal
 * to the caller, for folders whose life is not one test's or one suite's.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, onTestFinished } from "vitest";

/** A fresh temporary folder and its cleanup. */
export function tempDir(prefix = "macaron-core-"): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * A fresh folder for the running test: call it in the test or in a beforeEach. It is removed when
 * the test finishes (onTestFinished: after the afterEach hooks, and after the cleanups the test
 * registers later, so what was opened in it is closed first).
 */
export function testDir(prefix = "macaron-test-"): string {
  const dir = tempDir(prefix);
  onTestFinished(dir.remove);
  return dir.path;
}

/**
 * A folder shared by the tests of a file or describe block: call it at that level, before the
 * hooks that use it. It is made in a beforeAll (before those registered after it) and removed in
 * an afterAll that runs after those registered after it (vitest runs after-hooks in reverse), so
 * the engines and servers they close are gone first. `path` is readable from then until then.
 */
export function suiteDir(prefix = "macaron-test-"): { readonly path: string } {
  let dir: ReturnType<typeof tempDir> | undefined;
  beforeAll(() => {
    dir = tempDir(prefix);
  });
  afterAll(() => {
    dir?.remove();
    dir = undefined;
  });
  return {
    get path(): string {
      if (!dir) throw new Error("suiteDir: the folder exists between its beforeAll and afterAll");
      return dir.path;
    },
  };
}
