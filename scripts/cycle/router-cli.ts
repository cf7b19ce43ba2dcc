/**
 * `npx tsx scripts/cycle/router-cli.ts --model FILE.gguf --adapters DIR --out DIR [options]`: the
 * router stage of the cycle (router-cycle.ts) on a folder of adapters, without a cloud service:
 * trains a routing head for the model from the adapters' routing examples and the seed training
 * prompts, judges it on the contract's router suite against the folder's live router, and when
 * it passes writes a copy of the folder whose `--carrier` manifest carries the head in its
 * lineage (what a published release carries). `npm run contract -- --adapters OUT` then measures
 * it through the app. Exit 0 = passed and written, 1 = rejected, 2 = could not run.
 */
import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { sha256File } from "../../common/hashing";
import { loadContract } from "../../electron/core/contract/contract-schema";
import { defaultContract } from "../../electron/core/contract/default-contract";
import { EngineSupervisor } from "../../electron/core/engine/supervisor";
import { spawnNodeEngine } from "../../electron/core/engine/spawn-node";
import type { RouterCandidate } from "../../electron/core/router";
import { ROUTER_LINEAGE_KEY } from "../../electron/core/router/routing-head";
import { runRouterStage } from "./router-cycle";

const USAGE = `Usage: npx tsx scripts/cycle/router-cli.ts --model FILE.gguf --adapters DIR --out DIR [options]

  --seeds DIR      folder of <domain>.train.jsonl seed sets          default: resources/training
  --carrier ID     the adapter whose manifest carries the head      default: the first adapter
  --contract FILE  contract whose router cases judge the head        default: the app's default contract
  --force          write the copy even when the gate rejects the head`;

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: "string" },
      adapters: { type: "string" },
      out: { type: "string" },
      seeds: { type: "string" },
      carrier: { type: "string" },
      contract: { type: "string" },
      force: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help || !values.model || !values.adapters || !values.out) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  const model = resolve(values.model);
  const dir = resolve(values.adapters);
  const out = resolve(values.out);
  const manifests = (await readdir(dir)).filter((f) => f.endsWith(".json")).sort();
  const candidates: RouterCandidate[] = [];
  const raw = new Map<string, Record<string, unknown>>();
  for (const file of manifests) {
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(await readFile(join(dir, file), "utf8")) as Record<string, unknown>;
    } catch (err) {
      throw new Error(`${join(dir, file)}: not a JSON manifest (${(err as Error).message})`);
    }
    if (typeof m !== "object" || m === null) continue;
    if (typeof m.id !== "string") continue;
    raw.set(file, m);
    candidates.push({
      id: m.id,
      domain: String(m.domain),
      defaultScale: typeof m.defaultScale === "number" ? m.defaultScale : 1,
      routingExamples: Array.isArray(m.routingExamples) ? (m.routingExamples as string[]) : [],
      lineage: m.lineage,
    });
  }
  const carrier = values.carrier ?? candidates[0]?.id;
  if (!carrier || !candidates.some((c) => c.id === carrier)) {
    console.error(`No adapter ${carrier ?? ""} in ${dir}`);
    return 2;
  }
  const contract = values.contract ? await loadContract(resolve(values.contract)) : defaultContract();
  const stage = await runRouterStage({
    base: model,
    baseSha256: await sha256File(model),
    candidates,
    carrier,
    contract,
    makeEngine: () => new EngineSupervisor(spawnNodeEngine(), { readyTimeoutMs: 60_000 }),
    seedsDir: resolve(values.seeds ?? "resources/training"),
    log: (line) => console.log(line),
  });
  const v = stage.verdict;
  console.log(
    `router suite: candidate ${v.candidatePassed}/${v.cases}, live (${v.live}) ${v.livePassed}/${v.cases}; ` +
      `training ${JSON.stringify(stage.examples)}, ${stage.excluded} suite texts left out; ` +
      `embed ${stage.seconds.embed.toFixed(1)} s, train ${stage.seconds.train.toFixed(1)} s, judge ${stage.seconds.judge.toFixed(1)} s`,
  );
  for (const c of v.perCase)
    console.log(`  ${c.id}: expected ${c.expected}, candidate ${c.candidate}, live ${c.live}`);
  if (!v.passed && !values.force) return 1;
  await mkdir(out, { recursive: true });
  for (const file of await readdir(dir)) {
    const m = raw.get(file);
    if (m && m.id === carrier) {
      const lineage = (m.lineage ?? { parent: null, trainedFrom: "hand-made" }) as { details?: object };
      const withHead = {
        ...m,
        lineage: { ...lineage, details: { ...lineage.details, [ROUTER_LINEAGE_KEY]: stage.encoded } },
      };
      await writeFile(join(out, file), `${JSON.stringify(withHead, null, 2)}\n`);
    } else await copyFile(join(dir, file), join(out, basename(file)));
  }
  console.log(`wrote ${out} (head v${stage.head.version} in ${carrier}'s lineage)`);
  return v.passed ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(2);
  },
);
