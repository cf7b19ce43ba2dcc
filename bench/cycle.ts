/**
 * `npm run bench -- cycle [--examples 1000]`: the time of one improvement cycle and its parts
 * (export, training, cloud-side contract, publish) on the real service, trainer and engine.
 * The shipped demo Coding specialist is live (v1.0.0, the parent); N good-rated answers are
 * uploaded as feedback of the coding domain: the seed datasets' training examples of every
 * domain and then the pretraining corpus, so that N can reach 1k distinct examples. That mix is
 * for timing: the pass rates it reports are not a quality claim (the loop test and
 * `bench -- demo` are). Writes bench/results/cycle.json.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runCycle } from "../scripts/cycle/cycle";
import { type ManifestOnDisk, publishAdapter, publishManifestOf } from "../cloud/registry-client";
import { startCloud } from "../cloud/server";
import { makeItem, registerInstall, uploadBatch } from "../testing/cloud/items";
import { defaultContract } from "../electron/core/contract/default-contract";
import { EngineSupervisor } from "../electron/core/engine/supervisor";
import { spawnTestEngine } from "../testing/engine/real-engine";
import { demoAdaptersDir, demoBasePath } from "../native/gguf/demo-files";
import { report } from "./stats";

const ADMIN = "admin-key-bench-cycle";
const TRAINING = resolve(import.meta.dirname, "../resources/training");

type Example = { messages: { role: "user" | "assistant"; content: string }[] };

async function examples(n: number): Promise<Example[]> {
  const files = ["coding", "chat", "agent", "ui"].map((d) => `${d}.train.jsonl`).concat("pretrain.jsonl");
  const out: Example[] = [];
  for (const f of files) {
    const lines = (await readFile(join(TRAINING, f), "utf8")).split("\n").filter((l) => l.trim());
    for (const l of lines) {
      const e = JSON.parse(l) as Example;
      if (e.messages.length === 2) out.push(e);
      if (out.length >= n) return out;
    }
  }
  return out;
}

export async function benchCycle(opts: { examples: number }): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "macaron-bench-cycle-"));
  const cloud = await startCloud({ dataDir: join(dir, "cloud"), adminKey: ADMIN });
  try {
    // The shipped specialist is the live parent.
    const manifest = JSON.parse(
      await readFile(join(demoAdaptersDir(), "coding.json"), "utf8"),
    ) as ManifestOnDisk;
    await publishAdapter(
      { url: cloud.url, adminKey: ADMIN },
      publishManifestOf(manifest),
      await readFile(join(demoAdaptersDir(), "coding.gguf")),
    );
    const install = await registerInstall(cloud.url);
    const data = await examples(opts.examples);
    for (let i = 0; i < data.length; i += 100) {
      const items = data.slice(i, i + 100).map((e, j) =>
        makeItem(`bench-item-${i + j}`, {
          domain: "coding",
          prompt: [{ role: "user", text: e.messages[0]!.content }],
          response: e.messages[1]!.content,
        }),
      );
      const res = await uploadBatch(cloud.url, install, `bench-batch-${i}`, items);
      if (!res.ok) throw new Error(`upload: HTTP ${res.status} ${await res.text()}`);
    }
    const result = await runCycle({
      cloud: cloud.url,
      adminKey: ADMIN,
      domain: "coding",
      base: demoBasePath(),
      work: join(dir, "work"),
      contract: defaultContract(),
      training: { epochs: 1, seed: 0 },
      export: { bytesPerToken: 1 },
      makeEngine: () => new EngineSupervisor(spawnTestEngine()),
      log: (l) => console.log(l),
    });
    const rates = result.contract.comparison?.byTag.coding;
    report(
      "cycle",
      [
        { name: "export (train + held-out)", seconds: result.seconds.export },
        { name: "train (1 epoch, from the live parent)", seconds: result.seconds.train },
        { name: "contract, cloud side (coding suite, candidate + live)", seconds: result.seconds.contract },
        { name: "publish", seconds: result.seconds.publish },
        { name: "whole cycle", seconds: result.seconds.total },
      ],
      {
        uploaded: data.length,
        exported: { train: result.exported.train, heldout: result.exported.heldout },
        dropped: result.exported.report.dropped,
        trainTokensPerSecond: result.trained.report.tokensPerSecond,
        heldoutLoss: result.trained.report.heldout,
        codingPassRate: rates ? { live: rates.liveRate, candidate: rates.candidateRate } : null,
        published: result.published?.version ?? null,
      },
    );
  } finally {
    await cloud.close();
    await rm(dir, { recursive: true, force: true });
  }
}
