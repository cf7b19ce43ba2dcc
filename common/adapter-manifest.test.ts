import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  CompleteManifest,
  ManifestFile,
  ManifestReadError,
  manifestPathFor,
  readManifestFile,
} from "./adapter-manifest";
import { testDir } from "../testing/core/temp-dir";

const minimal = { id: "coding", name: "Coding", domain: "coding", version: "1.0.0" };

describe("the adapter manifest", () => {
  it("fills in what a hand-written manifest leaves out", () => {
    expect(ManifestFile.parse(minimal)).toEqual({
      ...minimal,
      description: "",
      defaultScale: 1,
      routingExamples: [],
    });
    expect(ManifestFile.safeParse({ ...minimal, id: "../x" }).success).toBe(false);
  });

  it("as written: every field present", () => {
    expect(CompleteManifest.safeParse(minimal).success).toBe(false);
    const written = {
      ...minimal,
      description: "",
      sha256: "a".repeat(64),
      sizeBytes: 10,
      base: { architecture: "llama", embeddingLength: 64, baseName: null, baseSha256: "b".repeat(64) },
      defaultScale: 1,
      routingExamples: [],
      lineage: { parent: null, trainedFrom: "fixture" },
    };
    expect(CompleteManifest.parse(written)).toEqual(written);
    expect(ManifestFile.parse(written)).toEqual(written);
  });

  describe("readManifestFile", () => {
    let dir: string;
    beforeEach(() => {
      dir = testDir("manifest-");
    });

    it("reads the manifest beside the adapter; null when there is none", async () => {
      const adapter = join(dir, "coding.gguf");
      expect(manifestPathFor(adapter)).toBe(join(dir, "coding.json"));
      expect(await readManifestFile(adapter)).toBeNull();
      await writeFile(join(dir, "coding.json"), JSON.stringify(minimal));
      expect((await readManifestFile(adapter))?.id).toBe("coding");
    });

    it("refuses one that is not JSON or not a manifest, naming only the file", async () => {
      const adapter = join(dir, "coding.gguf");
      await writeFile(join(dir, "coding.json"), "{");
      await expect(readManifestFile(adapter)).rejects.toThrow(
        new ManifestReadError("The adapter's manifest coding.json is not valid JSON."),
      );
      await writeFile(join(dir, "coding.json"), JSON.stringify({ id: "coding" }));
      await expect(readManifestFile(adapter)).rejects.toThrow(
        /^The adapter's manifest coding\.json is invalid: /,
      );
    });
  });
});
