/**
 * `npm run train` end to end on the tiny base: the CLI writes ID.gguf + ID.json, the app's
 * headless server installs them from `--adapters` and answers as model ID over /v1, and the
 * programmatic API continues training from that adapter.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import packageJson from "../../package.json";
import { ManifestFile } from "../../common/adapter-manifest";
import { harnessVersion } from "../../electron/core/harness";
import { spawnTestEngine } from "../../testing/engine/real-engine";
import { suiteDir } from "../../testing/core/temp-dir";
import { startServer, type RunningServer } from "../../electron/server/start";
import { readJson } from "../../testing/server/test-core";
import { sha256File } from "../../common/hashing";
import type { TrainedAdapterManifest } from "./trained-manifest";
import { runTrainCli } from "../../testing/cloud/training/cli-process";
import { sftLines, writeJsonl, writeTinyBase } from "../../testing/cloud/training/test-data";
import { trainAdapter } from "./train";

const dir = suiteDir("macaron-train-");
let base: string;
let data: string;
let out: string;

beforeAll(async () => {
  base = await writeTinyBase(dir.path);
  data = await writeJsonl(dir.path, "sums.jsonl", sftLines(20));
  out = join(dir.path, "adapters");
});

async function readManifest(path: string): Promise<TrainedAdapterManifest> {
  return JSON.parse(await readFile(path, "utf8")) as TrainedAdapterManifest;
}

describe("npm run train", () => {
  it("writes the adapter and a manifest the app accepts, printing progress", async () => {
    const run = await runTrainCli([
      ...["--base", base, "--data", data, "--out", out, "--id", "sums", "--domain", "coding"],
      ...["--steps", "20", "--threads", "1", "--device", "cpu", "--seed", "7"],
    ]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/dataset: 20 lines → \d+ training \+ \d+ held-out examples/);
    expect(run.stdout).toMatch(/step 20\/20 {2}loss \d+\.\d{4} {2}\d+ tok\/s {2}ETA 0:00/);
    expect(run.stdout).toMatch(/held-out loss \(\d+ examples\): \d+\.\d{4} → \d+\.\d{4}/);
    expect(run.stdout).toContain(`adapter:  ${join(out, "sums.gguf")}`);
    expect(run.stdout).toContain(`manifest: ${join(out, "sums.json")}`);

    const manifest = await readManifest(join(out, "sums.json"));
    expect(ManifestFile.safeParse(manifest).success).toBe(true);
    expect(manifest).toMatchObject({ id: "sums", domain: "coding", version: "1.0.0", defaultScale: 1 });
    expect(manifest.sha256).toBe(await sha256File(join(out, "sums.gguf")));
    expect(manifest.base).toMatchObject({ architecture: "llama", embeddingLength: 64 });
    expect(manifest.base.baseSha256).toBe(await sha256File(base));
    expect(manifest.routingExamples.length).toBeGreaterThan(0);
    const { lineage } = manifest;
    const dataSha = await sha256File(data);
    expect(lineage).toMatchObject({
      parent: null,
      parentSha256: null,
      trainedFrom: `dataset:sums.jsonl@sha256:${dataSha}`,
      dataset: { sha256: dataSha, lines: 20, droppedTooLong: 0, truncated: 0 },
      method: "sft",
      seed: 7,
      trainer: { name: "macaron_trainer" },
      device: "cpu",
      worldSize: 1,
      harnessVersion: harnessVersion(packageJson.version),
    });
    expect(lineage.dataset.examples + lineage.heldout.examples).toBe(20);
    expect(lineage.heldout.lossAfter!).toBeLessThan(lineage.heldout.lossBefore!);
    expect(lineage.lossCurve).toHaveLength(20);
    expect(lineage.hyperparameters).toMatchObject({ steps: 20 });
  });

  it("is served by `npm run serve -- --adapters DIR` as model ID", async () => {
    let server: RunningServer | undefined;
    try {
      server = await startServer({
        dataDir: join(dir.path, "data"),
        rendererDir: join(dir.path, "no-ui"),
        spawnEngine: spawnTestEngine(),
        model: base,
        adaptersDir: out,
      });
      expect(server.modelError).toBeNull();
      const headers = { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" };
      const models = await readJson<{ data: Array<{ id: string }> }>(
        await fetch(`${server.url}/v1/models`, { headers }),
      );
      expect(models.data.map((m) => m.id)).toContain("sums");
      const complete = async (model: string) => {
        const res = await fetch(`${server!.url}/v1/chat/completions`, {
          method: "POST",
          headers,
          body: JSON.stringify({
            model,
            messages: [{ role: "user", content: "What is 3 plus 3?" }],
            max_tokens: 8,
            temperature: 0,
          }),
        });
        expect(res.status).toBe(200);
        return readJson<{ model: string; choices: Array<{ message: { content: string } }> }>(res);
      };
      const trained = await complete("sums");
      expect(trained.model).toBe("sums");
      expect(trained.choices[0]?.message.content.length).toBeGreaterThan(0);
      // The trained weights are applied: greedy text differs from the base's.
      const plain = await complete("base");
      expect(trained.choices[0]?.message.content).not.toBe(plain.choices[0]?.message.content);
    } finally {
      await server?.close();
    }
  });

  it("continues from a parent adapter (programmatic API): lineage names the parent", async () => {
    const events: string[] = [];
    const result = await trainAdapter(
      { base, data, out, id: "sums-v2", from: join(out, "sums.gguf"), steps: 4, threads: 1, device: "cpu" },
      (p) => events.push(p.type === "trainer" ? p.event.event : p.type),
    );
    expect(events).toEqual(expect.arrayContaining(["stage", "tokenized", "start", "progress", "done"]));
    expect(result.adapterPath).toBe(join(out, "sums-v2.gguf"));
    // Version and domain follow the parent's manifest.
    expect(result.manifest).toMatchObject({ version: "1.1.0", domain: "coding" });
    expect(result.manifest.lineage.parent).toBe("1.0.0");
    expect(result.manifest.lineage.parentSha256).toBe(await sha256File(join(out, "sums.gguf")));
    expect(await readManifest(result.manifestPath)).toEqual(result.manifest);
  });
});
