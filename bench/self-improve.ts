/**
 * `npm run bench -- self-improve [--domains chat,coding,agent,ui] [--samples 4] [--prompts 40]
 * [--suite 24] [--epochs 4] [--lr 2e-3] [--temperature 0.8] [--method sft|dpo|sft+dpo|grpo]
 * [--beta 0.1]`: one self-improvement cycle per
 * domain on the shipped demo (resources/demo), through the real cloud service, node-llama-cpp,
 * the contract's checks and the PyTorch trainer (1 thread). The shipped specialists are live;
 * each cycle samples K answers per generated task prompt from the live one, keeps the best
 * passing answers (SFT) and best-vs-worst pairs (DPO), trains, and runs the cloud gate (the
 * default contract's cases of the domain, candidate against live); `--method grpo` trains on
 * every prompt's answers with their rewards instead (self-improve/groups.ts; `--beta` its KL
 * weight). Then the candidate and live
 * answer a suite of other task prompts of the training pools that were not sampled.
 * Writes bench/results/self-improve.json.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type ManifestOnDisk, publishAdapter, publishManifestOf } from "../cloud/registry-client";
import { startCloud } from "../cloud/server";
import { defaultContract } from "../electron/core/contract/default-contract";
import { EngineSupervisor } from "../electron/core/engine/supervisor";
import { type TaskDomain, TASK_DOMAINS } from "../electron/core/contract/task-contract";
import { demoAdaptersDir, demoBasePath } from "../native/gguf/demo-files";
import { runCloudGate } from "../scripts/cycle/cloud-gate";
import { type CycleMethod, runCycle } from "../scripts/cycle/cycle";
import { SELF_IMPROVE_DEFAULTS } from "../scripts/cycle/self-improve/self-improve";
import { selfImproveSuite, selfImproveTasks } from "../scripts/cycle/self-improve/tasks";
import { spawnTestEngine } from "../testing/engine/real-engine";
import { report } from "./stats";

const ADMIN = "admin-key-bench-self-improve";
const err = (lines: string[]): string => lines[lines.length - 1] ?? "";

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      domains: { type: "string", default: TASK_DOMAINS.join(",") },
      samples: { type: "string", default: String(SELF_IMPROVE_DEFAULTS.samples) },
      prompts: { type: "string", default: String(SELF_IMPROVE_DEFAULTS.prompts) },
      temperature: { type: "string", default: String(SELF_IMPROVE_DEFAULTS.temperature) },
      suite: { type: "string", default: "24" },
      epochs: { type: "string", default: "4" },
      lr: { type: "string", default: "2e-3" },
      method: { type: "string" },
      beta: { type: "string" },
    },
    strict: true,
  });
  const domains = values.domains.split(",").map((d) => d.trim()) as TaskDomain[];
  const samples = Number(values.samples);
  const prompts = Number(values.prompts);
  const dir = await mkdtemp(join(tmpdir(), "macaron-bench-self-improve-"));
  const cloud = await startCloud({ dataDir: join(dir, "cloud"), adminKey: ADMIN });
  const makeEngine = () => new EngineSupervisor(spawnTestEngine());
  const rows: Array<{ name: string; seconds: number }> = [];
  const results: Record<string, unknown> = {};
  try {
    for (const domain of domains) {
      const manifest = JSON.parse(
        await readFile(join(demoAdaptersDir(), `${domain}.json`), "utf8"),
      ) as ManifestOnDisk;
      await publishAdapter(
        { url: cloud.url, adminKey: ADMIN },
        publishManifestOf(manifest),
        await readFile(join(demoAdaptersDir(), `${domain}.gguf`)),
      );
    }
    for (const domain of domains) {
      const work = join(dir, `work-${domain}`);
      const t0 = performance.now();
      let lines: string[] = [];
      const result = await runCycle({
        cloud: cloud.url,
        adminKey: ADMIN,
        domain,
        base: demoBasePath(),
        work,
        contract: defaultContract(),
        ...(values.method ? { method: values.method as CycleMethod } : {}),
        selfImprove: { samples, prompts, temperature: Number(values.temperature), userPrompts: false },
        training: {
          epochs: Number(values.epochs),
          lr: Number(values.lr),
          seed: 0,
          ...(values.beta ? { beta: Number(values.beta) } : {}),
        },
        export: { bytesPerToken: 1 },
        makeEngine,
        log: (l) => {
          lines.push(l);
          console.log(`[${domain}] ${l}`);
        },
      }).catch((err: Error) => {
        // Nothing passed its checks (GRPO: no prompt's answers differ in reward): the cycle has
        // nothing to learn from (a result, not a crash).
        if (!/passed its checks|differ in reward/.test(err.message)) throw err;
        return null;
      });
      if (!result) {
        const sampled = lines.find((l) => l.includes("samples passed their checks")) ?? "";
        const grouped = lines.find((l) => l.includes("differ in reward (GRPO groups")) ?? "";
        results[domain] = { verdict: `no cycle: ${err(lines)}`, sampledLog: sampled, groupsLog: grouped };
        rows.push({ name: `${domain}: sampling, nothing passed`, seconds: (performance.now() - t0) / 1000 });
        continue;
      }
      lines = [];
      // The same candidate and live on task prompts of the pools that were not sampled.
      const sampled = selfImproveTasks(domain).slice(0, prompts);
      const suite = selfImproveSuite(domain, sampled, Number(values.suite));
      const suiteRun = await runCloudGate({
        base: demoBasePath(),
        liveDir: join(work, "live"),
        livePath: join(work, "live", `${domain}.gguf`),
        candidatePath: result.trained.adapterPath,
        candidate: { adapterId: domain, version: result.trained.manifest.version },
        contract: suite,
        makeEngine,
      });
      const contract = result.contract.comparison?.byTag[domain];
      const suiteRates = suiteRun.comparison?.byTag[domain];
      const s = result.selfImprove!;
      results[domain] = {
        contract: contract ? { live: contract.liveRate, candidate: contract.candidateRate } : null,
        suite: suiteRates ? { live: suiteRates.liveRate, candidate: suiteRates.candidateRate } : null,
        suiteCases: suite.cases.length,
        verdict: result.published
          ? "published"
          : `rejected: ${result.contract.failing.slice(0, 5).join(", ")}`,
        sampledPassShare: s.byDomain[domain]?.passShare ?? 0,
        sampled: s.byDomain[domain],
        sftLines: s.sftLines,
        dpoPairs: s.dpoPairs,
        method: result.method,
        groups: s.groups[domain] ?? null,
        heldoutPreferenceAccuracy: result.preferenceAccuracy,
        samplesPerSecond: s.samplesPerSecond,
        seconds: { ...result.seconds, sample: s.seconds.sample, judge: s.seconds.score },
      };
      console.log(`[${domain}] ${JSON.stringify(results[domain])}`);
      rows.push(
        { name: `${domain}: sample ${s.prompts.generated}×${samples}`, seconds: s.seconds.sample },
        { name: `${domain}: judge`, seconds: s.seconds.score },
        { name: `${domain}: train`, seconds: result.seconds.train },
        { name: `${domain}: gate (contract)`, seconds: result.seconds.contract },
        { name: `${domain}: whole cycle`, seconds: result.seconds.total },
      );
    }
    report("self-improve", rows, { samples, prompts, temperature: Number(values.temperature), results });
  } finally {
    await cloud.close();
    await rm(dir, { recursive: true, force: true });
  }
}
