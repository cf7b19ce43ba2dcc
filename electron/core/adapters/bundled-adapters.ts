import { mkdtemp, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFixtures } from "../../../native/gguf/fixtures";
import type { AdapterRegistry } from "./adapter-registry";

/**
 * The demo's Mixture-of-LoRA out of the box: when the demo model is opened and no adapter was
 * ever installed (no rows, nothing in <dataDir>/adapters), install the four generated demo
 * adapters (chat, coding, agent, ui) through the normal validated install path.
 * Returns the ids installed ([] when there was something already).
 */
export async function installDemoAdapters(registry: AdapterRegistry, dataDir: string): Promise<string[]> {
  if (registry.count > 0) return [];
  const present = await readdir(registry.dir).catch(() => [] as string[]);
  if (present.some((name) => name.endsWith(".gguf"))) return [];
  // Generated beside the database (same filesystem), then copied in by install().
  const temp = await mkdtemp(join(dataDir, ".demo-adapters-"));
  try {
    const fixtures = await writeFixtures(temp);
    const ids: string[] = [];
    for (const adapter of fixtures.adapters) ids.push((await registry.install(adapter.path)).id);
    return ids;
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/**
 * Install every `*.gguf` adapter of `dir` (headless `--adapters DIR`), each through the
 * validated install path. Adapters already installed (same id or same file) are skipped
 * quietly; any other refusal is reported by `log` and the rest still install.
 * Returns the ids newly installed.
 */
export async function installAdaptersFrom(
  registry: AdapterRegistry,
  dir: string,
  log: (message: string, err: unknown) => void,
): Promise<string[]> {
  const names = (await readdir(dir)).filter((name) => name.toLowerCase().endsWith(".gguf")).sort();
  const ids: string[] = [];
  for (const name of names) {
    try {
      ids.push((await registry.install(join(dir, name))).id);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (/already installed/.test(message)) continue;
      log(`could not install the adapter ${name}: ${message}`, null);
    }
  }
  return ids;
}
