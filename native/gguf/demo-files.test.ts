import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ManifestFile } from "../../common/adapter-manifest";
import { demoAdapterFiles, demoDir, DEMO_TOOL_CALL_FORMATS, ensureDemoModel } from "./demo-files";
import { writeFixtures } from "./fixtures";
import { suiteDir } from "../../testing/core/temp-dir";

const root = suiteDir("macaron-demo-files-");
let demo: string;
beforeAll(async () => {
  demo = join(root.path, "demo");
  // The fixtures have the layout of resources/demo: base.gguf and adapters/.
  await writeFixtures(demo);
});

describe("the demo files", () => {
  it("copies the demo base into the data folder, keeps an identical copy and replaces a damaged one", async () => {
    const models = join(root.path, "models");
    const path = await ensureDemoModel(models, demo);
    expect(readFileSync(path).equals(readFileSync(join(demo, "base.gguf")))).toBe(true);
    expect(await ensureDemoModel(models, demo)).toBe(path);
    const damaged = readFileSync(path);
    damaged[damaged.length - 1] = (damaged[damaged.length - 1] ?? 0) ^ 0xff;
    writeFileSync(path, damaged);
    await ensureDemoModel(models, demo);
    expect(readFileSync(path).equals(readFileSync(join(demo, "base.gguf")))).toBe(true);
  });

  it("says clearly when the installation lacks its demo model", async () => {
    await expect(ensureDemoModel(join(root.path, "m2"), join(root.path, "nowhere"))).rejects.toThrow(
      /demo model is missing from this installation/,
    );
  });

  it("lists the specialists' adapter files, and finds the shipped demo by default or $MACARON_DEMO_DIR", async () => {
    expect((await demoAdapterFiles(demo)).map((p) => basename(p))).toEqual([
      "chat.gguf",
      "coding.gguf",
      "agent.gguf",
      "ui.gguf",
    ]);
    expect(demoDir({})).toMatch(/resources[/\\]demo$/);
    expect(demoDir({ MACARON_DEMO_DIR: demo })).toBe(demo);
  });

  it("ships manifests that parse and match their files; the Agent's carries its tool-call format", async () => {
    const files = await demoAdapterFiles();
    expect(files).toHaveLength(4);
    for (const path of files) {
      const manifest = ManifestFile.parse(JSON.parse(readFileSync(path.replace(/\.gguf$/, ".json"), "utf8")));
      expect(manifest.sha256).toBe(createHash("sha256").update(readFileSync(path)).digest("hex"));
      expect(manifest.toolCallFormat).toEqual(DEMO_TOOL_CALL_FORMATS[manifest.domain]);
    }
    expect(DEMO_TOOL_CALL_FORMATS.agent?.callPrefix).toBe('{"tool":"');
  });
});
