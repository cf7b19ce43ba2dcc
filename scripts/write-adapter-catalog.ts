/**
 * Writes adapters/: the manifests of the four specialist demo adapters (exactly what
 * `npm run fixtures` writes beside the generated files — the generator is deterministic, so the
 * sha256 values match) and the JSON Schemas of the manifest and of the registry index.
 * `npx tsx scripts/write-adapter-catalog.ts`; a test checks the folder stays in sync.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";
import { RegistryIndex } from "../common/registry-protocol";
import { ManifestFile } from "../common/adapter-manifest";
import { writeFixtures } from "../native/gguf/fixtures";

export const ADAPTERS_DIR = resolve(import.meta.dirname, "../adapters");

/** File name → contents of everything generated in adapters/. */
export async function adapterCatalogFiles(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const dir = await mkdtemp(join(tmpdir(), "macaron-adapter-catalog-"));
  try {
    const fx = await writeFixtures(dir);
    for (const a of fx.adapters) files.set(`${a.id}.json`, await readFile(a.manifestPath, "utf8"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const schema = (s: z.ZodType) => JSON.stringify(z.toJSONSchema(s, { io: "input" }), null, 2) + "\n";
  files.set("manifest.schema.json", schema(ManifestFile));
  files.set("registry-index.schema.json", schema(RegistryIndex));
  return files;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  for (const [name, text] of await adapterCatalogFiles()) {
    await writeFile(join(ADAPTERS_DIR, name), text);
    console.log(`wrote adapters/${name}`);
  }
}
