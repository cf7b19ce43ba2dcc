/**
 * `npm run bench -- episodes [--samples 4] [--prompts 24] [--tasks 12] [--epochs 2]`: the agent
 * episodes' reward before and after one self-improvement cycle with `--episodes`, on the shipped
 * demo (resources/demo), through the real cloud service, node-llama-cpp, the agent loop with the
 * built-in tools and the episodes' MCP server, and the PyTorch trainer (1 thread).
 *
 * The shipped Agent is live. Before: it runs K episodes of each task on an evaluation salt (codes
 * the cycle never sees). The cycle samples the single-call tasks and runs K episodes per task on
 * a training salt; done episodes are SFT lines, (done, failed) DPO pairs. After: the candidate
 * (published or not) runs the same evaluation episodes. Writes bench/results/episodes.json.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type ManifestOnDisk, publishAdapter, publishManifestOf } from "../cloud/registry-client";
import { startCloud } from "../cloud/server";
import { DEFAULT_SYSTEM_PROMPT } from "../common/prompts";
import { defaultContract } from "../electron/core/contract/default-contract";
import { EngineSupervisor } from "../electron/core/engine/supervisor";
import { demoAdaptersDir, demoBasePath } from "../native/gguf/demo-files";
import { withLiveCore } from "../scripts/cycle/cloud-gate";
import { runCycle } from "../scripts/cycle/cycle";
import { episodeData, type EpisodeReport } from "../scripts/cycle/self-improve/episodes";
import { spawnTestEngine } from "../testing/engine/real-engine";
import { report } from "./stats";

const ADMIN = "admin-key-bench-episodes";
const EVAL_SALT = "bench-episodes-eval";
const TRAIN_SALT = "bench-episodes-train";

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      samples: { type: "string", default: "4" },
      prompts: { type: "string", default: "24" },
      tasks: { type: "string", default: "12" },
      epochs: { type: "string", default: "2" },
    },
    strict: true,
  });
  const samples = Number(values.samples);
  const tasks = Number(values.tasks);
  const dir = await mkdtemp(join(tmpdir(), "macaron-bench-episodes-"));
  const cloud = await startCloud({ dataDir: join(dir, "cloud"), adminKey: ADMIN });
  const makeEngine = () => new EngineSupervisor(spawnTestEngine());
  const evaluate = (liveDir: string): Promise<EpisodeReport> =>
    withLiveCore({ base: demoBasePath(), liveDir, makeEngine }, async (target) => {
      const r = await episodeData({
        target,
        options: { tasks, salt: EVAL_SALT },
        samples,
        temperature: 0.8,
        minP: 0.1,
        seed: 1001,
        promptSeed: "eval",
        systemPrompt: DEFAULT_SYSTEM_PROMPT,
      });
      return r.report;
    });
  try {
    const manifest = JSON.parse(
      await readFile(join(demoAdaptersDir(), "agent.json"), "utf8"),
    ) as ManifestOnDisk;
    await publishAdapter(
      { url: cloud.url, adminKey: ADMIN },
      publishManifestOf(manifest),
      await readFile(join(demoAdaptersDir(), "agent.gguf")),
    );
    const liveDir = join(dir, "live");
    await mkdir(liveDir, { recursive: true });
    await copyFile(join(demoAdaptersDir(), "agent.gguf"), join(liveDir, "agent.gguf"));
    await copyFile(join(demoAdaptersDir(), "agent.json"), join(liveDir, "agent.json"));
    const before = await evaluate(liveDir);
    const t = performance.now();
    const cycle = await runCycle({
      cloud: cloud.url,
      adminKey: ADMIN,
      domain: "agent",
      base: demoBasePath(),
      work: join(dir, "cycle"),
      contract: defaultContract(),
      selfImprove: {
        samples,
        prompts: Number(values.prompts),
        suite: 0,
        episodes: { tasks, salt: TRAIN_SALT },
      },
      training: { epochs: Number(values.epochs), lr: 2e-3, seed: 0, threads: 1 },
      export: { bytesPerToken: 1 },
      makeEngine,
      log: (l) => console.log(l),
    });
    const cycleSeconds = (performance.now() - t) / 1000;
    const candidateDir = join(dir, "candidate");
    await mkdir(candidateDir, { recursive: true });
    await copyFile(cycle.trained.adapterPath, join(candidateDir, "agent.gguf"));
    await writeFile(join(candidateDir, "agent.json"), JSON.stringify(cycle.trained.manifest, null, 2));
    const after = await evaluate(candidateDir);
    const row = (name: string, r: EpisodeReport) => ({
      name,
      episodes: r.episodes,
      done: r.done,
      meanReward: r.meanReward,
      tasksSolved: r.tasksSolved,
      noCall: r.zero["no call"] ?? 0,
      seconds: r.seconds,
    });
    report("episodes", [row("live (before)", before), row("candidate (after)", after)], {
      samples,
      tasks,
      training: cycle.selfImprove?.episodes ?? null,
      singleCall: { sftLines: cycle.selfImprove?.sftLines, dpoPairs: cycle.selfImprove?.dpoPairs },
      gate: { passed: cycle.contract.passed, published: cycle.published?.version ?? null },
      cycleSeconds,
      before,
      after,
    });
  } finally {
    await cloud.close();
    await rm(dir, { recursive: true, force: true });
  }
}
