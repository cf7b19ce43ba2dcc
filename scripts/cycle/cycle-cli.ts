/**
 * `npm run cycle -- --cloud URL --admin-key K --domain D --base FILE.gguf [options]`: one
 * improvement cycle (see cycle.ts). Exit 0 = the candidate passed and was published, 1 = the
 * contract rejected it (nothing published; the failing cases are printed), 2 = it could not run.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { loadContract } from "../../electron/core/contract/contract-schema";
import { defaultContract } from "../../electron/core/contract/default-contract";
import { formatReport } from "../../electron/core/contract/report-table";
import { EngineSupervisor } from "../../electron/core/engine/supervisor";
import { spawnNodeEngine } from "../../electron/core/engine/spawn-node";
import { progressPrinter } from "../../cloud/training/progress-printer";
import type { TrainOptions } from "../../cloud/training/train-options";
import { sha256File } from "../../common/hashing";
import { CYCLE_METHODS, runCycle, type CycleMethod } from "./cycle";
import { selfGeneratedSummary } from "./self-improve/groups";

const DEVICES = ["cpu", "cuda", "mps", "auto"] as const;
const SHA256 = /^[0-9a-f]{64}$/;

/** A compatible base given as its sha256, or as the file (hashed here). */
function compatibleSha256(given: string): Promise<string> {
  return SHA256.test(given) ? Promise.resolve(given) : sha256File(resolve(given));
}

const USAGE = `Usage: npm run cycle -- --cloud URL --admin-key KEY --domain D --base FILE.gguf [options]

  --cloud            the cloud service (its export, registry and publish endpoints)
  --admin-key        the service's admin key
  --domain           adapter id / domain to improve: chat, coding, agent, ui…
  --base             the base model (GGUF) the adapters are trained for: any base; the parent
                     and the published version are that file's (by sha256) in the registry
  --compatible-base X  another file of the same weights (a quantization) the version fits too:
                     a .gguf path or its sha256; repeat for several. Apps running it are offered it
  --work DIR         working folder (exports, parent, candidate, contract.json)   default: a temp folder
  --contract FILE    contract whose cases tagged D judge the candidate            default: the app's default contract
  --method M         sft | dpo | sft+dpo: SFT on the export, DPO on its preference pairs
                     (regenerations, ratings, corrections), or SFT then DPO       default: sft
                     grpo: group-relative policy gradient from the live version on groups of
                     answers with their rewards: the users' trajectories (the groups export:
                     each prompt's answers that called tools, failures included, a lone one
                     against a baseline of 0.5) and, with --self-improve, every prompt's K
                     sampled answers
  --replay-dir DIR   accepted training lines per domain, replayed into the next cycle
                     (earlier lessons kept), and the taught suites' cases        default: none (no replay)
  --self-improve     learn from the live specialist's own checked attempts instead of the export:
                     K answers per task prompt (generated from the training pools, never the
                     contract's held-out cases, plus users' prompts from the export), each judged
                     by the contract's checks; best passing → SFT, best vs worst → DPO (method
                     default sft+dpo); the lineage records the data as self-generated
  --samples K        answers sampled per prompt (--self-improve)                  default 4
  --temperature T    sampling temperature, > 0 (--self-improve)                   default 0.8
  --prompts N        generated task prompts (--self-improve)                      default 40
  --families A,B     only these task families (agent-tools, agent-plans, chat-topics,
                     chat-feelings, coding, ui)                                  default all of the domain's
  --sample-seed S    first sampling seed; --prompt-seed S which draw of prompts  default 1, 0
  --no-user-prompts  generated prompts only (not the users' prompts of the export)
  --no-user-groups   --method grpo: leave the users' trajectories out (self-generated groups only)
  --episodes         agent only, with --self-improve: the live Agent also runs K multi-step
                     episodes per episode task through the agent loop (built-in tools and an
                     MCP server); done episodes -> SFT lines with their calls, done vs failed ->
                     DPO pairs; with --method grpo each task's episodes with their rewards
  --episode-tasks N  episode tasks (--episodes)                                   default 12
  --episode-salt S   the episode server's salt (its codes), for a reproducible run  default: new per cycle
  --publish-taught-cases  put the taught suites' cases (users' prompts and answers) in the
                     registry lineage, which every install downloads, so the app's gate judges
                     them too; only for a registry whose installs are one team's own  default: ids only
  --router           train the router too: a routing head for this base from the live adapters'
                     routing examples, the seed prompts (--router-seeds) and the routing outcomes of
                     the feedback (overrides, pins, good ratings), judged on the contract's router
                     suite against the live router; a passing head is published in the version's lineage
  --router-seeds DIR  folder of <domain>.train.jsonl seed sets (--router)     default resources/training
  --steps N | --epochs N, --lr X, --rank R, --seed S, --batch-size B, --nproc N  trainer options
  --device D         cpu | cuda | mps | auto: where the trainer runs                default auto
  --bytes-per-token N  the base tokenizer's bytes per token, for the export's length limit (default 3)
  --json FILE        write the cycle's result here`;

function parse(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      cloud: { type: "string" },
      "admin-key": { type: "string" },
      domain: { type: "string" },
      base: { type: "string" },
      "compatible-base": { type: "string", multiple: true },
      device: { type: "string" },
      work: { type: "string" },
      contract: { type: "string" },
      method: { type: "string" },
      "replay-dir": { type: "string" },
      "publish-taught-cases": { type: "boolean" },
      "self-improve": { type: "boolean" },
      samples: { type: "string" },
      temperature: { type: "string" },
      prompts: { type: "string" },
      families: { type: "string" },
      "sample-seed": { type: "string" },
      "prompt-seed": { type: "string" },
      "no-user-prompts": { type: "boolean" },
      "no-user-groups": { type: "boolean" },
      episodes: { type: "boolean" },
      "episode-tasks": { type: "string" },
      "episode-salt": { type: "string" },
      router: { type: "boolean" },
      "router-seeds": { type: "string" },
      steps: { type: "string" },
      epochs: { type: "string" },
      lr: { type: "string" },
      rank: { type: "string" },
      seed: { type: "string" },
      "batch-size": { type: "string" },
      nproc: { type: "string" },
      "bytes-per-token": { type: "string" },
      json: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) return null;
  for (const name of ["cloud", "admin-key", "domain", "base"] as const)
    if (!values[name]) throw new Error(`--${name} is required`);
  const num = (v: string | undefined, name: string): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
    return n;
  };
  const device = (v: string | undefined): TrainOptions["device"] => {
    if (v === undefined) return undefined;
    if (!DEVICES.includes(v as never)) throw new Error(`--device must be one of ${DEVICES.join(", ")}`);
    return v as TrainOptions["device"];
  };
  for (const c of values["compatible-base"] ?? [])
    if (!SHA256.test(c) && !c.endsWith(".gguf"))
      throw new Error(`--compatible-base takes a .gguf file or a sha256 (64 hex digits): ${c}`);
  const selfImprove = values["self-improve"] === true;
  const method = (values.method ?? (selfImprove ? "sft+dpo" : "sft")) as CycleMethod;
  if (!CYCLE_METHODS.includes(method)) throw new Error(`--method must be one of ${CYCLE_METHODS.join(", ")}`);
  for (const name of [
    "samples",
    "temperature",
    "prompts",
    "families",
    "sample-seed",
    "prompt-seed",
    "episodes",
  ] as const)
    if (values[name] !== undefined && !selfImprove) throw new Error(`--${name} needs --self-improve`);
  for (const name of ["episode-tasks", "episode-salt"] as const)
    if (values[name] !== undefined && values.episodes !== true) throw new Error(`--${name} needs --episodes`);
  if (values["no-user-groups"] === true && method !== "grpo")
    throw new Error("--no-user-groups needs --method grpo");
  if (values["no-user-groups"] === true && !selfImprove)
    throw new Error("--no-user-groups leaves --method grpo nothing to learn from without --self-improve");
  if (values["router-seeds"] !== undefined && values.router !== true)
    throw new Error("--router-seeds needs --router");
  const samples = num(values.samples, "samples");
  if (samples !== undefined && (!Number.isInteger(samples) || samples < 2))
    throw new Error("--samples must be an integer of at least 2");
  return {
    method,
    userGroups: values["no-user-groups"] !== true,
    selfImprove: selfImprove
      ? {
          samples,
          temperature: num(values.temperature, "temperature"),
          prompts: num(values.prompts, "prompts"),
          families: values.families?.split(",").map((f) => f.trim()),
          seed: values["sample-seed"] === undefined ? undefined : Number(values["sample-seed"]),
          promptSeed: values["prompt-seed"],
          userPrompts: values["no-user-prompts"] !== true,
          episodes:
            values.episodes === true
              ? {
                  tasks: num(values["episode-tasks"], "episode-tasks"),
                  ...(values["episode-salt"] !== undefined ? { salt: values["episode-salt"] } : {}),
                }
              : undefined,
        }
      : undefined,
    router:
      values.router === true
        ? { seedsDir: resolve(values["router-seeds"] ?? "resources/training") }
        : undefined,
    replayDir: values["replay-dir"] ? resolve(values["replay-dir"]) : undefined,
    publishTaughtCases: values["publish-taught-cases"] === true,
    cloud: values.cloud!,
    adminKey: values["admin-key"]!,
    domain: values.domain!,
    base: resolve(values.base!),
    compatibleBases: values["compatible-base"] ?? [],
    work: values.work ? resolve(values.work) : undefined,
    contract: values.contract ? resolve(values.contract) : undefined,
    json: values.json ? resolve(values.json) : undefined,
    bytesPerToken: num(values["bytes-per-token"], "bytes-per-token"),
    training: {
      steps: num(values.steps, "steps"),
      epochs: num(values.epochs, "epochs"),
      lr: num(values.lr, "lr"),
      rank: num(values.rank, "rank"),
      seed: values.seed === undefined ? undefined : Number(values.seed),
      batchSize: num(values["batch-size"], "batch-size"),
      nproc: num(values.nproc, "nproc"),
      device: device(values.device),
    },
  };
}

async function main(): Promise<number> {
  let args;
  try {
    args = parse(process.argv.slice(2));
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (!args) {
    console.log(USAGE);
    return 0;
  }
  try {
    const contract = args.contract ? await loadContract(args.contract) : defaultContract();
    const training = Object.fromEntries(Object.entries(args.training).filter(([, v]) => v !== undefined));
    const printer = progressPrinter({
      write: (text) => process.stdout.write(text),
      tty: Boolean(process.stdout.isTTY),
    });
    const result = await runCycle({
      cloud: args.cloud,
      adminKey: args.adminKey,
      domain: args.domain,
      base: args.base,
      compatibleBases: await Promise.all(args.compatibleBases.map(compatibleSha256)),
      work: args.work ?? (await mkdtemp(join(tmpdir(), "macaron-cycle-"))),
      contract,
      method: args.method,
      userGroups: args.userGroups,
      replayDir: args.replayDir,
      publishTaughtCases: args.publishTaughtCases,
      router: args.router,
      selfImprove: args.selfImprove
        ? Object.fromEntries(Object.entries(args.selfImprove).filter(([, v]) => v !== undefined))
        : undefined,
      training,
      export: args.bytesPerToken ? { bytesPerToken: args.bytesPerToken } : undefined,
      makeEngine: () => new EngineSupervisor(spawnNodeEngine(), { readyTimeoutMs: 60_000 }),
      log: (l) => console.log(l),
      onTrainProgress: printer.onProgress,
    });
    console.log(formatReport(result.contract));
    const report = result.exported.report;
    if (result.selfImprove) {
      const s = result.selfImprove;
      for (const [domain, d] of Object.entries(s.byDomain))
        console.log(
          `self-improve ${domain}: ${d.passed}/${d.samples} samples passed their checks (${(d.passShare * 100).toFixed(0)}%), ` +
            `${d.promptsSolved}/${d.prompts} prompts solved`,
        );
      console.log(`${selfGeneratedSummary(args.method, s)}; ${s.samplesPerSecond.toFixed(2)} samples/s`);
      if (s.episodes)
        console.log(
          `episodes: ${s.episodes.done}/${s.episodes.episodes} done, mean reward ${s.episodes.meanReward.toFixed(3)}; ` +
            `${s.episodes.sftLines} SFT lines, ${s.episodes.dpoPairs} DPO pairs, ` +
            `${s.episodes.negativesUnpaired} failed episodes unpaired; reward 0: ${JSON.stringify(s.episodes.zero)}`,
        );
      if (result.episodesGate) {
        const e = result.episodesGate;
        console.log(
          `episodes gate (${e.episodes} episodes a side, tasks not trained on): candidate mean reward ` +
            `${e.candidate.meanReward.toFixed(3)} vs live ${e.live.meanReward.toFixed(3)}, episodes with a valid call ` +
            `${e.candidate.validCallShare.toFixed(3)} vs ${e.live.validCallShare.toFixed(3)}: ${e.passed ? "ok" : "failed"}`,
        );
      }
      for (const [domain, g] of Object.entries(s.groups))
        console.log(
          `GRPO groups ${domain}: ${g.withSignal}/${g.groups} with rewards that differ (${(g.signalShare * 100).toFixed(0)}%), ` +
            `mean reward ${g.meanReward.toFixed(3)}`,
        );
    } else
      console.log(
        `export: ${report.splits.train} train, ${report.splits.heldout} held out; dropped ${JSON.stringify(report.dropped)}` +
          (report.quality ? `; quality ${JSON.stringify(report.quality)}` : ""),
      );
    if (result.exported.groups) {
      const g = result.exported.groups;
      const trained = g.report.trajectories?.negativesTrained;
      console.log(
        `users' trajectories: ${g.train} GRPO groups, ${g.heldout} held out; dropped ${JSON.stringify(g.report.dropped)}` +
          (trained
            ? `; failed answers trained: ${trained.inGroups} (${trained.unpaired} with no success to their prompt)`
            : ""),
      );
    }
    if (result.router) {
      const v = result.router.verdict;
      console.log(
        `router head v${result.router.version}: ${v.passed ? "passed" : "rejected"} (${v.reason}); ` +
          `candidate ${v.candidatePassed}/${v.cases}, live ${v.live} ${v.livePassed}/${v.cases}; published: ${result.router.published}`,
      );
    }
    if (result.preferenceAccuracy)
      console.log(
        `held-out preference accuracy: ${result.preferenceAccuracy.before ?? "n/a"} → ${result.preferenceAccuracy.after ?? "n/a"}`,
      );
    if (args.json) await writeFile(args.json, `${JSON.stringify(result, null, 2)}\n`);
    if (result.published) {
      console.log(
        `published ${result.published.id} ${result.published.version} (${result.seconds.total.toFixed(0)} s)`,
      );
      return 0;
    }
    console.log(`rejected: ${result.contract.failing.join(", ")}`);
    return 1;
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
}

process.exitCode = await main();
