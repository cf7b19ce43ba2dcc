import { createHash } from "node:crypto";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import type { AdapterManifest } from "../../common/adapter-manifest";
import { ensureFixtureModel, writeFixtures } from "./fixtures";
import { assertAdapterFits, readGguf, summarizeModel } from "./reader";
import { TINY_MODEL_NAME } from "./tiny-model";
import { suiteDir } from "../../testing/core/temp-dir";

const dir = suiteDir("gguf-fixtures-");

async function listFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .sort();
}

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

describe("writeFixtures", () => {
  it("writes the base model, four adapters and their manifests, byte for byte the same each run", async () => {
    const a = await writeFixtures(join(dir.path, "a"));
    const b = await writeFixtures(join(dir.path, "b"));
    const files = await listFiles(join(dir.path, "a"));
    expect(files).toEqual([
      "adapters/agent.gguf",
      "adapters/agent.json",
      "adapters/chat.gguf",
      "adapters/chat.json",
      "adapters/coding.gguf",
      "adapters/coding.json",
      "adapters/ui.gguf",
      "adapters/ui.json",
      "base.gguf",
    ]);
    expect(await listFiles(join(dir.path, "b"))).toEqual(files);
    for (const f of files) {
      expect(sha256(await readFile(join(dir.path, "a", f))), f).toBe(
        sha256(await readFile(join(dir.path, "b", f))),
      );
    }
    expect(a.baseSha256).toBe(b.baseSha256);
    expect(a.basePath).toBe(join(dir.path, "a", "base.gguf"));
    expect(a.adapters.map((x) => x.id)).toEqual(["chat", "coding", "agent", "ui"]);
  });

  it("describes each adapter in a manifest that matches its file and base", async () => {
    const out = await writeFixtures(join(dir.path, "m"));
    const base = await readGguf(out.basePath);
    expect(out.baseSha256).toBe(sha256(await readFile(out.basePath)));
    for (const adapter of out.adapters) {
      const manifest = JSON.parse(await readFile(adapter.manifestPath, "utf8")) as AdapterManifest;
      expect(manifest).toEqual(adapter.manifest);
      const bytes = await readFile(adapter.path);
      expect(manifest).toMatchObject({
        id: adapter.id,
        version: "1.0.0",
        sha256: sha256(bytes),
        sizeBytes: bytes.length,
        base: {
          architecture: "llama",
          embeddingLength: 64,
          baseName: TINY_MODEL_NAME,
          baseSha256: out.baseSha256,
        },
        defaultScale: 1,
        lineage: { parent: null, trainedFrom: "generated fixture" },
      });
      expect(manifest.name.length).toBeGreaterThan(0);
      expect(manifest.description.length).toBeGreaterThan(0);
      expect(manifest.routingExamples.length).toBeGreaterThanOrEqual(5);
      expect(manifest.routingExamples.length).toBeLessThanOrEqual(10);
      await assertAdapterFits(adapter.path, base);
    }
  });

  it("writes other sizes beside the tiny one", async () => {
    const out = await writeFixtures(join(dir.path, "s"), { size: "small" });
    expect(out.basePath).toBe(join(dir.path, "s", "base-small.gguf"));
    const base = await readGguf(out.basePath);
    expect(summarizeModel(base, out.basePath)).toMatchObject({ embeddingLength: 256, blockCount: 4 });
    expect(out.adapters[0]!.manifest.base.embeddingLength).toBe(256);
    await assertAdapterFits(out.adapters[0]!.path, base);
  });
});

describe("ensureFixtureModel", () => {
  it("writes demo.gguf once, keeps it, and replaces a damaged one", async () => {
    const demoDir = join(dir.path, "demo", "nested");
    const path = await ensureFixtureModel(demoDir);
    expect(path).toBe(join(demoDir, "demo.gguf"));
    const info = summarizeModel(await readGguf(path), path);
    expect(info.isDemo).toBe(true);
    const first = await stat(path);

    expect(await ensureFixtureModel(demoDir)).toBe(path);
    expect((await stat(path)).mtimeMs).toBe(first.mtimeMs);

    await writeFile(path, "half a model");
    await ensureFixtureModel(demoDir);
    expect((await readGguf(path)).fileSize).toBe(first.size);
    expect(await readdir(demoDir)).toEqual(["demo.gguf"]);
  });

  it("survives concurrent callers", async () => {
    const demoDir = join(dir.path, "race");
    const paths = await Promise.all([
      ensureFixtureModel(demoDir),
      ensureFixtureModel(demoDir),
      ensureFixtureModel(demoDir),
    ]);
    expect(new Set(paths).size).toBe(1);
    await readGguf(paths[0]);
    expect(await readdir(demoDir)).toEqual(["demo.gguf"]);
  });
});
