import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureFixtureModel, writeFixtures } from "../../native/gguf/fixtures";
import type { ServiceParts } from "../../electron/core/core-services";

/**
 * Core parts that make "Try the demo model" open the deterministic fixtures instead of the
 * trained demo: the tiny untrained base and the marker adapters ("cccc", "{{{{", "aaaa",
 * "uuuu") whose greedy output tests can predict exactly.
 */
export const FIXTURE_DEMO: Pick<ServiceParts, "ensureDemoModel" | "demoAdapterFiles"> = {
  ensureDemoModel: ensureFixtureModel,
  demoAdapterFiles: async (scratch) => (await writeFixtures(scratch)).adapters.map((a) => a.path),
};

let written: Promise<string> | null = null;
/**
 * A demo folder (base.gguf + adapters/, the layout of resources/demo) holding the fixtures,
 * written once per test process: `demoDir` for createCore and startServer.
 */
export function fixtureDemoDir(): Promise<string> {
  written ??= (async () => {
    // temp-dir: own — one folder for the whole test process, shared by every file it runs, so no
    // test's or suite's hook may remove it.
    const dir = mkdtempSync(join(tmpdir(), "macaron-fixture-demo-"));
    await writeFixtures(dir);
    return dir;
  })();
  return written;
}
