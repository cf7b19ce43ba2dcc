import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ManifestFile } from "../common/adapter-manifest";
import { ADAPTERS_DIR, adapterCatalogFiles } from "./write-adapter-catalog";

describe("adapters/ (committed manifests and formats)", () => {
  it("matches what the fixture generator and the schemas produce (run scripts/write-adapter-catalog.ts)", async () => {
    for (const [name, text] of await adapterCatalogFiles()) {
      expect(await readFile(join(ADAPTERS_DIR, name), "utf8"), `adapters/${name}`).toBe(text);
    }
  });

  it("holds a valid manifest for each of the four specialists", async () => {
    for (const id of ["chat", "coding", "agent", "ui"]) {
      const manifest = ManifestFile.parse(
        JSON.parse(await readFile(join(ADAPTERS_DIR, `${id}.json`), "utf8")),
      );
      expect(manifest.id).toBe(id);
      expect(manifest.routingExamples.length).toBeGreaterThanOrEqual(5);
      expect(manifest.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
  });
});
