/**
 * `npm run bench -- demo`: does the demo learn? The default contract's held-out task suites
 * (new wordings, new subjects) answered by the trained demo base alone and by each trained
 * specialist, on the real engine: pass rate per domain, base vs specialist, and the contract's
 * run time. Writes bench/results/demo.json.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_SYSTEM_PROMPT } from "../electron/core/chat/turn-deps";
import { runContract } from "../electron/core/contract/contract-runner";
import { coreTarget } from "../electron/core/contract/core-target";
import type { Contract } from "../electron/core/contract/contract-schema";
import { defaultContract } from "../electron/core/contract/default-contract";
import { EngineSupervisor } from "../electron/core/engine/supervisor";
import { assembleCore, type Core } from "../electron/core/index";
import { spawnTestEngine } from "../testing/engine/real-engine";
import { demoAdaptersDir, demoBasePath, demoDir } from "../native/gguf/demo-files";
import { report } from "./stats";

const DOMAINS = ["chat", "coding", "agent", "ui"] as const;

/** The same cases with every pinned specialist replaced by the base alone. */
function baseOnly(contract: Contract): Contract {
  return {
    ...contract,
    cases: contract.cases.filter((c) => c.mode !== "auto").map((c) => ({ ...c, mode: "base" })),
  };
}

/**
 * Core in a fresh data folder with the trained demo loaded and its specialists installed, on
 * the real engine: what the demo benches measure through. `dispose` closes it and deletes the folder.
 */
export async function openDemoCore(prefix: string): Promise<{ core: Core; dispose: () => Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), prefix));
  const core = await assembleCore(
    {
      dataDir,
      initialModel: demoBasePath(),
      adaptersDir: demoAdaptersDir(),
      demoAdapters: false,
      log: () => undefined,
    },
    () => new EngineSupervisor(spawnTestEngine()),
  );
  return {
    core,
    dispose: async () => {
      await core.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function benchDemo(): Promise<void> {
  const contract = defaultContract();
  const { core, dispose } = await openDemoCore("macaron-bench-demo-");
  try {
    const target = coreTarget(core);
    const run = (c: Contract) => runContract(c, { target, systemPrompt: DEFAULT_SYSTEM_PROMPT });
    const specialists = await run(contract);
    const base = await run(baseOnly(contract));
    const rows = DOMAINS.map((d) => ({
      name: d,
      cases: specialists.byTag[d]?.total ?? 0,
      base: base.byTag[d]?.passRate ?? 0,
      specialist: specialists.byTag[d]?.passRate ?? 0,
    }));
    const router = specialists.byTag.router;
    console.log(
      `router: ${router ? `${router.passed}/${router.total}` : "n/a"}; contract ${specialists.passed ? "passed" : "failed"} (${specialists.reasons.join("; ")}); ` +
        `run time ${(specialists.durationMs / 1000).toFixed(1)} s (specialists), ${(base.durationMs / 1000).toFixed(1)} s (base)`,
    );
    report("demo", rows, {
      demo: demoDir(),
      contract: `${contract.contract}@${contract.version}`,
      rows,
      router: router ?? null,
      passed: specialists.passed,
      reasons: specialists.reasons,
      contractSeconds: { specialists: specialists.durationMs / 1000, base: base.durationMs / 1000 },
      failing: specialists.failing,
    });
  } finally {
    await dispose();
  }
}
