/**
 * `npm run bench -- self-improve [--domains chat,coding,agent,ui] [--samples 4] [--prompts 40]
 * [--suite 24] [--epochs 4] [--lr 2e-3] [--temperature 0.8] [--method sft|dpo|sft+dpo|grpo]
 * [--beta 0.1] [--cycles 1]`: one (or N) self-improvement cycle(s) per
 * domain on the shipped demo (resources/demo), through the real cloud service, node-llama-cpp,
 * the contract's checks and the PyTorch trainer (1 thread). The shipped specialists are live;
 * each cycle samples K answers per generated task prompt from the live one, keeps the best
 * passing answers (SFT) and best-vs-worst pairs (DPO), trains, and runs the cloud gate (the
 * default contract's cases of the domain, candidate against live); `--method grpo` trains on
 * every prompt's answers with their rewards instead (self-improve/groups.ts; `--beta` its KL
 * weight). Then the candidate and live
 * answer a suite of other task prompts of the training pools that were not sampled.
 *
 * `--cycles N` (default 1): N cycles in a row per domain, each sampling from what is live after
 * the one before (a published candidate is live; a rejected one leaves live as it was), the same
 * prompts with new sampling seeds each cycle. Cycle 0 is the shipped specialist, evaluated on the
 * gate's contract (the default contract's cases of the domain and the gate's unsampled prompts);
 * `perCycle` records, per domain and cycle, what is live after it and its pass rates, the share
 * of sampled answers that passed, samples/s, seconds and the verdict (self-improve-cycles.ts).
 * The fields outside `perCycle` describe cycle 1, as with one cycle.
 * Writes bench/results/self-improve.json and the chart bench/charts/self-improve.svg (after
 * every domain, so a run cut short keeps the domains it finished).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type ManifestOnDisk, publishAdapter, publishManifestOf } from "../cloud/registry-client";
import { startCloud } from "../cloud/server";
import { DEFAULT_SYSTEM_PROMPT } from "../common/prompts";
import { runContract } from "../electron/core/contract/contract-runner";
import type { Contract } from "../electron/core/contract/contract-schema";
import { defaultContract } from "../electron/core/contract/default-contract";
import { EngineSupervisor } from "../electron/core/engine/supervisor";
import { type TaskDomain, TASK_DOMAINS } from "../electron/core/contract/task-contract";
import { demoAdaptersDir, demoBasePath } from "../native/gguf/demo-files";
import { domainSuite, runCloudGate, withLiveCore } from "../scripts/cycle/cloud-gate";
import { type CycleMethod, runCycle } from "../scripts/cycle/cycle";
import { SELF_IMPROVE_DEFAULTS, withSuite } from "../scripts/cycle/self-improve/self-improve";
import { selfImproveSuite, selfImproveTasks } from "../scripts/cycle/self-improve/tasks";
import { spawnTestEngine } from "../testing/engine/real-engine";
import {
  type CycleRecord,
  cycleZero,
  nextRecord,
  parseSampledLog,
  selfImproveChart,
  suiteTag,
} from "./self-improve-cycles";
import { report } from "./stats";

const ADMIN = "admin-key-bench-self-improve";
const err = (lines: string[]): string => lines[lines.length - 1] ?? "";
/** Cycle c samples with seeds from 1 + (c − 1)·SEED_STRIDE: new answers from the same prompts. */
const SEED_STRIDE = 100_000;

/**
 * The contract the gate of a self-improvement cycle judges (cycle.ts: the default contract's
 * cases of the domain with the unsampled generated prompts of self-improve.ts, tagged
 * `<domain>-self`), rebuilt here to evaluate the shipped specialist alone as cycle 0.
 */
function gateContract(domain: TaskDomain, prompts: number): Contract {
  const sampled = selfImproveTasks(domain).slice(0, prompts);
  const drawn = selfImproveSuite(domain, sampled, SELF_IMPROVE_DEFAULTS.suite);
  const suite = {
    ...drawn,
    cases: drawn.cases.map((c) => ({
      ...c,
      id: c.id.replace("-self-", "-selfsuite-"),
      tags: [suiteTag(domain)],
    })),
  };
  return withSuite(domainSuite(defaultContract(), domain), suite);
}

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
      cycles: { type: "string", default: "1" },
    },
    strict: true,
  });
  const domains = values.domains.split(",").map((d) => d.trim()) as TaskDomain[];
  const samples = Number(values.samples);
  const prompts = Number(values.prompts);
  const cycles = Number(values.cycles);
  if (!Number.isInteger(cycles) || cycles < 1)
    throw new Error(`--cycles takes a whole number ≥ 1, not ${values.cycles}`);
  const dir = await mkdtemp(join(tmpdir(), "macaron-bench-self-improve-"));
  const cloud = await startCloud({ dataDir: join(dir, "cloud"), adminKey: ADMIN });
  const makeEngine = () => new EngineSupervisor(spawnTestEngine());
  const rows: Array<{ name: string; seconds: number }> = [];
  const results: Record<string, unknown> = {};
  const perCycle: Record<string, CycleRecord[]> = {};
  const shipped: Record<string, string> = {};
  const write = () => {
    report("self-improve", rows, {
      samples,
      prompts,
      temperature: Number(values.temperature),
      cycles,
      results,
      perCycle,
    });
    const charts = resolve(import.meta.dirname, "charts");
    mkdirSync(charts, { recursive: true });
    writeFileSync(join(charts, "self-improve.svg"), selfImproveChart(perCycle));
  };
  try {
    for (const domain of domains) {
      const manifest = JSON.parse(
        await readFile(join(demoAdaptersDir(), `${domain}.json`), "utf8"),
      ) as ManifestOnDisk;
      shipped[domain] = manifest.version;
      await publishAdapter(
        { url: cloud.url, adminKey: ADMIN },
        publishManifestOf(manifest),
        await readFile(join(demoAdaptersDir(), `${domain}.gguf`)),
      );
    }
    for (const domain of domains) {
      // Cycle 0: the shipped specialist alone on the gate's contract.
      let t0 = performance.now();
      const shippedDir = join(dir, `shipped-${domain}`);
      await mkdir(shippedDir, { recursive: true });
      for (const ext of ["gguf", "json"])
        await copyFile(join(demoAdaptersDir(), `${domain}.${ext}`), join(shippedDir, `${domain}.${ext}`));
      const zero = await withLiveCore({ base: demoBasePath(), liveDir: shippedDir, makeEngine }, (live) =>
        runContract(gateContract(domain, prompts), { target: live, systemPrompt: DEFAULT_SYSTEM_PROMPT }),
      );
      const records: CycleRecord[] = [cycleZero(domain, shipped[domain]!, zero.byTag)];
      perCycle[domain] = records;
      rows.push({
        name: `${domain}: cycle 0 (shipped), gate contract`,
        seconds: (performance.now() - t0) / 1000,
      });
      console.log(`[${domain}] cycle 0: ${JSON.stringify(records[0])}`);
      for (let c = 1; c <= cycles; c++) {
        const tag = cycles === 1 ? domain : `${domain} cycle ${c}`;
        const work = join(dir, cycles === 1 ? `work-${domain}` : `work-${domain}-${c}`);
        t0 = performance.now();
        let lines: string[] = [];
        let noCycle = "";
        const result = await runCycle({
          cloud: cloud.url,
          adminKey: ADMIN,
          domain,
          base: demoBasePath(),
          work,
          contract: defaultContract(),
          ...(values.method ? { method: values.method as CycleMethod } : {}),
          selfImprove: {
            samples,
            prompts,
            temperature: Number(values.temperature),
            userPrompts: false,
            seed: SELF_IMPROVE_DEFAULTS.seed + (c - 1) * SEED_STRIDE,
          },
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
            console.log(`[${tag}] ${l}`);
          },
        }).catch((err: Error) => {
          // Nothing passed its checks (GRPO: no prompt's answers differ in reward): the cycle has
          // nothing to learn from (a result, not a crash).
          if (!/passed its checks|differ in reward/.test(err.message)) throw err;
          noCycle = err.message;
          return null;
        });
        const prev = records[records.length - 1]!;
        if (!result) {
          const sampled = lines.find((l) => l.includes("samples passed their checks")) ?? "";
          const grouped = lines.find((l) => l.includes("differ in reward (GRPO groups")) ?? "";
          const seconds = (performance.now() - t0) / 1000;
          if (c === 1)
            results[domain] = { verdict: `no cycle: ${err(lines)}`, sampledLog: sampled, groupsLog: grouped };
          records.push(
            nextRecord(domain, prev, {
              kind: "no cycle",
              reason: noCycle,
              ...parseSampledLog(sampled),
              seconds,
            }),
          );
          rows.push({ name: `${tag}: sampling, nothing passed`, seconds });
          console.log(`[${tag}] ${JSON.stringify(records[records.length - 1])}`);
          continue;
        }
        const s = result.selfImprove!;
        const sampledStats = s.byDomain[domain];
        records.push(
          nextRecord(domain, prev, {
            kind: "gated",
            published: result.published !== null,
            candidateVersion: result.trained.manifest.version,
            reasons: result.contract.reasons,
            byTag: result.contract.comparison?.byTag ?? {},
            sampled: sampledStats
              ? {
                  samples: sampledStats.samples,
                  passed: sampledStats.passed,
                  passShare: sampledStats.passShare,
                }
              : null,
            samplesPerSecond: s.samplesPerSecond,
            seconds: result.seconds.total,
          }),
        );
        console.log(`[${tag}] ${JSON.stringify(records[records.length - 1])}`);
        rows.push(
          { name: `${tag}: sample ${s.prompts.generated}×${samples}`, seconds: s.seconds.sample },
          { name: `${tag}: judge`, seconds: s.seconds.score },
          { name: `${tag}: train`, seconds: result.seconds.train },
          { name: `${tag}: gate (contract)`, seconds: result.seconds.contract },
          { name: `${tag}: whole cycle`, seconds: result.seconds.total },
        );
        if (c !== 1) continue;
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
      }
      write();
    }
    write();
  } finally {
    await cloud.close();
    await rm(dir, { recursive: true, force: true });
  }
}
