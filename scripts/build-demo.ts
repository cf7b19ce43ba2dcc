/**
 * `npm run build-demo [-- --out resources/demo] [--pretrain-epochs N] [--adapter-epochs N]
 *   [--domains agent,…] [--skip-base] [--threads N] [--lr X] [--adapter-max-seconds S] [--compact-tools]`:
 * makes what the app ships as its demo, with the project's own trainer (PyTorch; the app never
 * needs Python):
 *   1. the untrained demo base (native/gguf/demo-base.ts) is pretrained, all weights, on the
 *      general corpus resources/training/pretrain.jsonl: prose answers, plus answers in each
 *      specialist's format when the user asks for it explicitly;
 *   2. the four specialists (chat, coding, agent, ui) are trained as LoRA adapters on that base
 *      from resources/training/<domain>.train.jsonl, held-out loss on <domain>.heldout.jsonl.
 * Writes <out>/base.gguf and <out>/adapters/<domain>.{gguf,json}. Deterministic for a machine
 * and thread count (seeded); resources/demo/README.md records the command and the numbers.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type TrainedAdapterManifest, writeManifest } from "../cloud/training/trained-manifest";
import { DEMO_CHAT_SMALL_TALK, demoAdapter } from "../native/gguf/adapters";
import { demoBaseInitSpec } from "../native/gguf/demo-base";
import { DEMO_TOOL_CALL_FORMATS } from "../native/gguf/demo-files";
import { BUILTIN_DOMAINS, type BuiltinDomain } from "../common/domains";
import type { ToolCallFormat } from "../common/engine-protocol";
import { writeGguf } from "../native/gguf/writer";
import { readDatasetFile } from "../cloud/training/dataset-file";
import { checkTorch, locatePython, runTrainer } from "../cloud/training/python-trainer";
import { tokenizeDataset } from "../cloud/training/tokenize-dataset";
import { trainAdapter, type TrainResult } from "../cloud/training/train";

export const DEMO_DOMAINS = BUILTIN_DOMAINS;
type DemoDomain = BuiltinDomain;

const DESCRIPTIONS: Record<DemoDomain, string> = {
  chat: "Everyday conversation: short, friendly one-line replies (demo specialist, trained).",
  coding: "Programming requests: answers with a small function in a code block (demo specialist, trained).",
  agent: "Tasks: a numbered three-step plan, or a tool call as JSON (demo specialist, trained).",
  ui: "Answers as interactive components: forms, tables, choices, progress (demo specialist, trained).",
};

/** Training prompts added to each specialist's routing examples. */
const ROUTING_FROM_TRAINING = 60;
const TRAINING = resolve(import.meta.dirname, "../resources/training");

export interface BuildDemoOptions {
  out: string;
  pretrainEpochs: number;
  adapterEpochs: number;
  /** Only these specialists (default all four); the base is reused when it exists and `skipBase`. */
  domains?: readonly DemoDomain[];
  skipBase?: boolean;
  /** Torch threads per training run (1 on a loaded machine; 2 when it is free). */
  threads?: number;
  /** The specialists' peak learning rate (default: the trainer's). */
  lr?: number;
  /** Stop each specialist's training after this many seconds of it (a loaded machine). */
  adapterMaxSeconds?: number;
  /** The tool-call formats the specialists are trained on and shipped with (DEMO_TOOL_CALL_FORMATS). */
  toolFormats?: Readonly<Record<string, ToolCallFormat>>;
  log?: (line: string) => void;
}

interface PretrainReport {
  seconds: number;
  tokensPerSecond: number;
  lossCurve: [number, number][];
  heldout?: { lossBefore: number; lossAfter: number } | null;
}

/**
 * What the router is seeded with: the hand-written examples of the domain, then the first
 * training prompts. On the tiny base the embeddings separate the domains poorly; more examples
 * helped (router cases 3 → 5 of 16 with 60 more per domain).
 */
async function routingExamples(domain: DemoDomain): Promise<string[]> {
  const file = await readDatasetFile(join(TRAINING, `${domain}.train.jsonl`));
  const prompts = file.examples.flatMap((e) =>
    e.prompt.filter((m) => m.role === "user").map((m) => m.content),
  );
  return [...new Set([...handWrittenRouting(domain), ...prompts.slice(0, ROUTING_FROM_TRAINING)])];
}

/** The hand-written routing examples of a demo domain; the demo Chat's include small talk. */
function handWrittenRouting(domain: DemoDomain): readonly string[] {
  const own = demoAdapter(domain).routingExamples;
  return domain === "chat" ? [...own, ...DEMO_CHAT_SMALL_TALK] : own;
}

/** The manifest field of a specialist trained to call tools in its own syntax (none for the others). */
function toolCallFormat(
  domain: DemoDomain,
  formats: Readonly<Record<string, ToolCallFormat>> = DEMO_TOOL_CALL_FORMATS,
): { toolCallFormat?: ToolCallFormat } {
  const format = formats[domain];
  return format ? { toolCallFormat: format } : {};
}

/**
 * Files trained together with a domain's own (`<name>.train.jsonl` and `<name>.heldout.jsonl`
 * beside `<domain>.*.jsonl`) when the domain's tool-call format documents the tools: the Agent's
 * generated tool sets (scripts/training/seed/tool-sets.ts), which only make sense with the tools
 * in the prompt (`--compact-tools`). The shipped Agent's format does not document them, so a
 * plain build trains it as before.
 */
export const EXTRA_TRAINING: Readonly<Partial<Record<DemoDomain, string>>> = { agent: "agent-tools" };

/** DEMO_TOOL_CALL_FORMATS with the Agent's tools documented compactly (native/engine/tool-docs.ts). */
export function compactToolFormats(): Record<string, ToolCallFormat> {
  const agent = DEMO_TOOL_CALL_FORMATS.agent;
  return { ...DEMO_TOOL_CALL_FORMATS, ...(agent ? { agent: { ...agent, documented: "compact" } } : {}) };
}

/** The domain's training (or held-out) file, joined with its extra one in `work` when it has one. */
async function trainingFile(
  domain: DemoDomain,
  half: "train" | "heldout",
  work: string,
  format: ToolCallFormat | undefined,
): Promise<string> {
  const own = join(TRAINING, `${domain}.${half}.jsonl`);
  const extra = EXTRA_TRAINING[domain];
  if (!extra || !format?.documented) return own;
  const joined = join(work, `${domain}.${half}.jsonl`);
  const texts = await Promise.all(
    [own, join(TRAINING, `${extra}.${half}.jsonl`)].map((p) => readFile(p, "utf8")),
  );
  await writeFile(joined, texts.map((t) => (t.endsWith("\n") ? t : `${t}\n`)).join(""));
  return joined;
}

/** Seeds every specialist of `dir` with its routing examples (routingExamples above). */
export async function refreshRouting(
  dir: string,
  formats: Readonly<Record<string, ToolCallFormat>> = DEMO_TOOL_CALL_FORMATS,
): Promise<void> {
  for (const domain of DEMO_DOMAINS) {
    const path = join(dir, `${domain}.json`);
    const manifest = await readJson<TrainedAdapterManifest>(path);
    if (manifest)
      await writeManifest(path, {
        ...manifest,
        routingExamples: await routingExamples(domain),
        ...toolCallFormat(domain, formats),
      });
  }
}

async function readJson<T>(path: string): Promise<T | null> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as T;
  } catch {
    return null;
  }
}

/** Step 1: pretrain the demo base; returns the trainer's report. */
async function pretrainBase(
  base: string,
  work: string,
  epochs: number,
  threads: number,
  log: (l: string) => void,
) {
  const init = join(work, "init.gguf");
  await writeGguf(init, demoBaseInitSpec());
  const corpus = await readDatasetFile(join(TRAINING, "pretrain.jsonl"));
  const tokenized = await tokenizeDataset(init, corpus, null, {
    domain: "chat",
    method: "sft",
    maxLength: 2048,
    maxLengthPolicy: "drop",
    trainOut: join(work, "pretrain.tok.jsonl"),
    heldoutOut: join(work, "pretrain.heldout.tok.jsonl"),
  });
  log(`pretrain corpus: ${tokenized.dataset.examples} examples, ${tokenized.tokens} tokens`);
  const python = locatePython();
  checkTorch(python);
  const report = join(work, "pretrain.report.json");
  const args = ["pretrain", "--base", init, "--data", tokenized.trainPath, "--out", base];
  args.push("--report", report, "--epochs", String(epochs), "--seed", "0", "--batch-size", "16");
  args.push("--threads", String(threads));
  if (tokenized.heldoutPath) args.push("--heldout", tokenized.heldoutPath);
  let last = 0;
  await runTrainer({
    python,
    nproc: 1,
    args,
    onEvent: (e) => {
      if (e.event !== "progress" || Date.now() - last < 10_000) return;
      last = Date.now();
      log(
        `pretrain step ${e.step}/${e.steps} loss ${(e.loss ?? NaN).toFixed(3)} ${Math.round(e.tokensPerSecond)} tok/s`,
      );
    },
    onLog: (line) => log(`  ${line}`),
  });
  return JSON.parse(await readFile(report, "utf8")) as PretrainReport;
}

/** Builds the demo; returns the reports (the JSON that resources/demo/build.json keeps). */
export async function buildDemo(options: BuildDemoOptions) {
  const log = options.log ?? ((l: string) => console.log(l));
  const out = resolve(options.out);
  const adaptersOut = join(out, "adapters");
  await mkdir(adaptersOut, { recursive: true });
  const work = await mkdtemp(join(tmpdir(), "macaron-demo-build-"));
  const base = join(out, "base.gguf");
  try {
    const started = performance.now();
    const pretrain = options.skipBase
      ? null
      : await pretrainBase(join(work, "base.gguf"), work, options.pretrainEpochs, options.threads ?? 1, log);
    if (pretrain) await copyFile(join(work, "base.gguf"), base);
    const adapters: Record<string, TrainResult["report"]> = {};
    for (const domain of options.domains ?? DEMO_DOMAINS) {
      log(`training the ${domain} specialist`);
      const format = toolCallFormat(domain, options.toolFormats).toolCallFormat;
      const result = await trainAdapter(
        {
          base,
          data: await trainingFile(domain, "train", work, format),
          heldout: await trainingFile(domain, "heldout", work, format),
          ...(format ? { toolFormat: format } : {}),
          out: adaptersOut,
          id: domain,
          domain,
          epochs: options.adapterEpochs,
          seed: 0,
          version: "1.0.0",
          threads: options.threads,
          lr: options.lr,
          ...(options.adapterMaxSeconds ? { maxSeconds: options.adapterMaxSeconds } : {}),
          name: demoAdapter(domain).name,
          description: DESCRIPTIONS[domain],
        },
        (p) => {
          if (p.type === "trainer" && p.event.event === "heldout")
            log(`  held-out loss ${(p.event.loss ?? NaN).toFixed(3)}`);
        },
      );
      adapters[domain] = result.report;
      // The router is seeded from these: the hand-written examples of each domain first.
      const routing = [...new Set([...handWrittenRouting(domain), ...result.manifest.routingExamples])];
      await writeManifest(result.manifestPath, {
        ...result.manifest,
        routingExamples: routing,
        ...toolCallFormat(domain, options.toolFormats),
      });
      log(`  ${domain}: ${result.adapterPath} (${result.seconds.train.toFixed(0)} s)`);
    }
    const summary = {
      seconds: (performance.now() - started) / 1000,
      pretrain: pretrain && {
        seconds: pretrain.seconds,
        tokensPerSecond: pretrain.tokensPerSecond,
        firstLoss: pretrain.lossCurve[0]?.[1],
        lastLoss: pretrain.lossCurve.at(-1)?.[1],
        heldout: pretrain.heldout ?? null,
      },
      adapters: Object.fromEntries(
        Object.entries(adapters).map(([d, r]) => [
          d,
          {
            seconds: r.seconds,
            tokensPerSecond: r.tokensPerSecond,
            hyperparameters: r.hyperparameters,
            heldout: r.heldout,
          },
        ]),
      ),
    };
    await refreshRouting(adaptersOut, options.toolFormats);
    // Partial rebuilds (--domains, --skip-base) keep the other parts' numbers.
    const previous = await readJson<typeof summary>(join(out, "build.json"));
    if (previous) {
      summary.pretrain ??= previous.pretrain;
      summary.adapters = { ...previous.adapters, ...summary.adapters };
    }
    await writeFile(join(out, "build.json"), `${JSON.stringify(summary, null, 2)}\n`);
    return summary;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith("build-demo.ts")) {
  const { values } = parseArgs({
    options: {
      out: { type: "string", default: "resources/demo" },
      "pretrain-epochs": { type: "string", default: "3" },
      "adapter-epochs": { type: "string", default: "4" },
      domains: { type: "string" },
      "skip-base": { type: "boolean", default: false },
      threads: { type: "string", default: "1" },
      lr: { type: "string" },
      "adapter-max-seconds": { type: "string" },
      "compact-tools": { type: "boolean", default: false },
    },
  });
  await buildDemo({
    out: values.out,
    pretrainEpochs: Number(values["pretrain-epochs"]),
    adapterEpochs: Number(values["adapter-epochs"]),
    domains: values.domains?.split(",") as DemoDomain[] | undefined,
    skipBase: values["skip-base"],
    threads: Number(values.threads),
    lr: values.lr === undefined ? undefined : Number(values.lr),
    adapterMaxSeconds:
      values["adapter-max-seconds"] === undefined ? undefined : Number(values["adapter-max-seconds"]),
    ...(values["compact-tools"] ? { toolFormats: compactToolFormats() } : {}),
  });
}
