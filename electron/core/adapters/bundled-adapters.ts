import { mkdtemp, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { readManifestBeside } from "./manifest-reader";
import type { AdapterRegistry } from "./adapter-registry";
import type { AdapterStore } from "./adapter-store";

/**
 * Where the demo's adapter files come from: the trained specialists that ship with the app
 * (native/gguf/demo-files.ts) or, in tests, the deterministic fixtures. Files may be written
 * into `scratch` (a temporary folder beside the database, removed afterwards).
 */
export type DemoAdapterFiles = (scratch: string) => Promise<string[]>;

/**
 * The demo's Mixture-of-LoRA out of the box: when the demo model is opened and no adapter was
 * ever installed (no rows, nothing in <dataDir>/adapters), install the four demo specialists
 * (chat, coding, agent, ui) through the normal validated install path.
 * Returns the ids installed ([] when there was something already).
 */
export async function installDemoAdapters(
  registry: AdapterRegistry,
  dataDir: string,
  files: DemoAdapterFiles,
): Promise<string[]> {
  if (registry.count > 0) {
    await refreshDemoToolFormats(registry.store, files, dataDir);
    return [];
  }
  const present = await readdir(registry.dir).catch(() => [] as string[]);
  if (present.some((name) => name.endsWith(".gguf"))) return [];
  // Beside the database (same filesystem): install() copies from there.
  const scratch = await mkdtemp(join(dataDir, ".demo-adapters-"));
  try {
    const ids: string[] = [];
    for (const path of await files(scratch)) ids.push((await registry.install(path)).id);
    return ids;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The demo specialists of an older install keep the manifest they were installed with; one that
 * had no `toolCallFormat` (the Agent before tool calls) gets the shipped one, so the same trained
 * file calls tools after an update. Only adapters whose file is the shipped one (same sha256) are
 * touched, and only a missing format is added: nothing the user installed changes.
 * Returns the ids updated.
 */
export async function refreshDemoToolFormats(
  store: AdapterStore,
  files: DemoAdapterFiles,
  dataDir: string,
): Promise<string[]> {
  const scratch = await mkdtemp(join(dataDir, ".demo-adapters-"));
  try {
    const updated: string[] = [];
    for (const path of await files(scratch)) {
      const shipped = await readManifestBeside(path).catch(() => null);
      if (!shipped?.toolCallFormat || !shipped.sha256) continue;
      const installed = store.findBySha256(shipped.sha256);
      if (!installed || installed.manifest.toolCallFormat) continue;
      if (store.setManifest(installed.id, { ...installed.manifest, toolCallFormat: shipped.toolCallFormat }))
        updated.push(installed.id);
    }
    return updated;
  } finally {
    await rm(scratch, { recursive: true, force: true });
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
