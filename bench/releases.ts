/**
 * `npm run bench -- releases [--runs N]`: the release loop on the tiny demo model with the real
 * engine and the local cloud service: the smoke contract's run time (live set, CLI path),
 * the time from "update available" (a new coding version in the registry index) to live
 * (check + download + sha256 + validation + gate + promotion), and a rollback.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCloud } from "../cloud/server";
import { codingManifest, publishAdapter } from "../testing/cloud/hand-built-versions";
import { demoAdapterSpec } from "../native/gguf/adapters";
import { writeFixtures } from "../native/gguf/fixtures";
import { encodeGguf, gv } from "../native/gguf/writer";
import type { Result } from "../electron/api";
import { DEFAULT_SYSTEM_PROMPT } from "../electron/core/chat/turn-pipeline";
import { runContract } from "../electron/core/contract/contract-runner";
import { smokeContract } from "../electron/core/contract/default-contract";
import { EngineSupervisor } from "../electron/core/engine/supervisor";
import { spawnTestEngine } from "../testing/engine/real-engine";
import { assembleCore } from "../electron/core/index";
import { median, report } from "./stats";

export async function benchReleases(opts: { runs: number }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-releases-"));
  const adminKey = "bench-admin-key-123456";
  const fixtures = await writeFixtures(join(dir, "fx"));
  const cloud = await startCloud({ dataDir: join(dir, "cloud"), adminKey });
  const core = await assembleCore(
    {
      dataDir: join(dir, "app"),
      initialModel: fixtures.basePath,
      adaptersDir: fixtures.adaptersDir,
      demoAdapters: false,
      // The fixture adapters answer with markers: the smoke contract is their gate.
      contract: smokeContract(),
      registryUrl: cloud.url,
      updatesInitialDelayMs: 3_600_000,
      log: () => undefined,
    },
    () => new EngineSupervisor(spawnTestEngine()),
  );
  const call = async (method: string, input: unknown): Promise<unknown> => {
    const r: Result<unknown> = await core.dispatch(method, input, { transport: "ipc" });
    if (!r.ok) throw new Error(`${method}: ${r.error.message}`);
    return r.value;
  };
  const contract = smokeContract();
  const contractMs: number[] = [];
  const updateMs: number[] = [];
  const rollbackMs: number[] = [];
  try {
    // Warm-up: the router's embeddings and the adapters' first load are not what is measured.
    const target = {
      resolve: (selection: Parameters<typeof core.adapters.resolve>[0], text: string) =>
        core.adapters.resolve(selection, text),
      generate: (
        h: Parameters<typeof core.engine.generate>[0],
        o: Parameters<typeof core.engine.generate>[1],
        s?: AbortSignal,
      ) => core.engine.generate(h, o, () => undefined, s),
    };
    await runContract(contract, { target, systemPrompt: DEFAULT_SYSTEM_PROMPT });
    for (let i = 0; i < opts.runs; i++) {
      const t0 = performance.now();
      const r = await runContract(contract, { target, systemPrompt: DEFAULT_SYSTEM_PROMPT });
      contractMs.push(performance.now() - t0);
      if (!r.passed) throw new Error(`the smoke contract failed: ${r.failing.join(", ")}`);

      const version = `2.0.${i}`;
      const spec = demoAdapterSpec("coding");
      const file = encodeGguf({
        ...spec,
        metadata: { ...spec.metadata, "general.name": gv.str(`coding ${version}`) },
      });
      await publishAdapter(
        { url: cloud.url, adminKey },
        codingManifest(version, "0".repeat(64), fixtures.baseSha256, "bench"),
        file,
      );
      const t1 = performance.now();
      const check = (await call("adapters.checkUpdates", { wait: true })) as {
        results: { outcome: string }[];
      };
      updateMs.push(performance.now() - t1);
      if (check.results[0]?.outcome !== "promoted")
        throw new Error(`update not promoted: ${JSON.stringify(check.results)}`);

      const t2 = performance.now();
      await call("adapters.rollback", { id: "coding", version: "1.0.0" });
      rollbackMs.push(performance.now() - t2);
    }
  } finally {
    await core.close();
    await cloud.close();
    rmSync(dir, { recursive: true, force: true });
  }
  report(
    "releases",
    [
      {
        name: `smoke contract (${contract.cases.length} cases, tiny model)`,
        medianMs: median(contractMs),
        maxMs: Math.max(...contractMs),
      },
      {
        name: "update available → live (check, download, verify, gate, promote)",
        medianMs: median(updateMs),
        maxMs: Math.max(...updateMs),
      },
      {
        name: "rollback (one transaction + release row)",
        medianMs: median(rollbackMs),
        maxMs: Math.max(...rollbackMs),
      },
    ],
    { runs: opts.runs },
  );
}
