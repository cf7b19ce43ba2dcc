/**
 * The seed datasets of the demo specialists and the default contract built on their held-out
 * halves. Deterministic (seeded PRNG over templates × subjects × wordings; train and held-out
 * pools share no subject and no wording):
 *
 *   resources/training/D.train.jsonl     ~200 SFT examples per domain D (chat, coding, agent, ui)
 *   resources/training/D.heldout.jsonl   ~36 held-out examples per domain
 *   resources/training/pretrain.jsonl    the general corpus the tiny demo base is pretrained on
 *   resources/contracts/default.json     the task contract (macaron-default) from the held-out files
 *
 * `npm run seed-data` (= tsx scripts/training/seed-data.ts --out resources/training
 * [--contract resources/contracts/default.json]). Formats: resources/training/README.md.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { format } from "prettier";
import { parseDocument } from "../../electron/api/genui";
import { parseContract } from "../../electron/core/contract/contract-schema";
import { buildTaskContract } from "../../electron/core/contract/task-contract";
import { AGENT_PLANS, AGENT_TOOL_CALLS } from "./seed/agent";
import { callLine, toolSetHeldout, toolSetTrainLines } from "./seed/tool-sets";
import { CHAT_FEELINGS, CHAT_TOPICS } from "./seed/chat";
import { CODING } from "./seed/coding";
import { pretrainCorpus } from "./seed/pretrain";
import {
  rng,
  SEED_DOMAINS,
  type SeedDomain,
  type SeedExample,
  type SeedFamily,
  seedFamily,
  shuffled,
} from "./seed/types";
import { UI } from "./seed/ui";

export { pretrainCorpus, SEED_DOMAINS, type SeedDomain, type SeedExample };

/** Bumped when the generated data changes on purpose (part of every PRNG seed). */
export const SEED_DATA_VERSION = "seed-v1";

/**
 * How the trainer must prompt each domain's examples: "ui" lines are UI-mode turns (the app's
 * system prompt + the GenUI instructions, common/prompts.ts uiSystemPrompt);
 * the others take the app's system prompt as is.
 */
export const SEED_FORMATS: Readonly<Record<SeedDomain, "text" | "ui">> = {
  chat: "text",
  coding: "text",
  agent: "text",
  ui: "ui",
};

/** Each domain's families of examples (subjects × wordings). */
export const SEED_FAMILIES: Readonly<Record<SeedDomain, readonly SeedFamily[]>> = {
  chat: [seedFamily(CHAT_TOPICS), seedFamily(CHAT_FEELINGS)],
  coding: [seedFamily(CODING)],
  agent: [seedFamily(AGENT_PLANS), seedFamily(AGENT_TOOL_CALLS)],
  ui: [seedFamily(UI)],
};

/** Limits every answer keeps (characters); the contract checks the same formats. */
const MAX_ANSWER_CHARS: Readonly<Record<SeedDomain, number>> = {
  chat: 100,
  coding: 220,
  agent: 200,
  ui: 330,
};

/** Refuse an answer the specialist must not learn (too long, wrong shape, invalid UI). */
function checkAnswer(domain: SeedDomain, answer: string): void {
  const problem = ((): string | null => {
    if ([...answer].length > MAX_ANSWER_CHARS[domain])
      return `longer than ${MAX_ANSWER_CHARS[domain]} characters`;
    if (domain === "chat" && /[\n`{]/.test(answer)) return "not one plain line";
    if (domain === "ui") {
      const checked = parseDocument(answer);
      if (!checked.ok) return checked.reason;
      if (checked.issues.length > 0)
        return `invalid node ${checked.issues[0]!.id}: ${checked.issues[0]!.reason}`;
    }
    return null;
  })();
  if (problem) throw new Error(`seed ${domain} answer ${JSON.stringify(answer)}: ${problem}`);
}

export interface DomainData {
  train: SeedExample[];
  heldout: SeedExample[];
}

/** The train and held-out examples of every domain, checked. */
export function seedDatasets(): Record<SeedDomain, DomainData> {
  const out = {} as Record<SeedDomain, DomainData>;
  for (const domain of SEED_DOMAINS) {
    const half = (which: "train" | "heldout"): SeedExample[] => {
      const seed = `${SEED_DATA_VERSION}/${domain}/${which}`;
      const all = SEED_FAMILIES[domain].flatMap((f) => f.examples(which, seed));
      for (const e of all) checkAnswer(domain, e.messages[1]!.content);
      return shuffled(all, rng(seed));
    };
    out[domain] = { train: half("train"), heldout: half("heldout") };
  }
  return out;
}

const jsonl = (examples: readonly object[]): string => examples.map((e) => `${JSON.stringify(e)}\n`).join("");

/** File name (in the training folder) → contents, for everything `writeSeedData` writes there. */
export function seedFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const data = seedDatasets();
  for (const domain of SEED_DOMAINS) {
    files.set(`${domain}.train.jsonl`, jsonl(data[domain].train));
    files.set(`${domain}.heldout.jsonl`, jsonl(data[domain].heldout));
  }
  files.set("pretrain.jsonl", jsonl(pretrainCorpus()));
  // The Agent's generated tool sets (seed/tool-sets.ts): `build-demo --compact-tools` trains the
  // Agent on agent.train.jsonl and these together; bench agent-unseen-tools asks the held-out half.
  const toolSeed = `${SEED_DATA_VERSION}/agent-tools`;
  files.set("agent-tools.train.jsonl", jsonl(toolSetTrainLines(toolSeed, AGENT_PLANS.train.subjects)));
  files.set("agent-tools.heldout.jsonl", jsonl(toolSetHeldout(toolSeed).map(callLine)));
  return files;
}

/** The default contract's JSON text for the generated held-out sets (formatted like the repo). */
export async function defaultContractText(): Promise<string> {
  const data = seedDatasets();
  const json = buildTaskContract({
    chat: data.chat.heldout,
    coding: data.coding.heldout,
    agent: data.agent.heldout,
    ui: data.ui.heldout,
  });
  parseContract(json, "the generated default contract");
  return format(JSON.stringify(json), { parser: "json", printWidth: 110 });
}

/** Write the datasets into `dir` (created if needed); returns the paths written. */
export async function writeSeedData(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const [name, text] of seedFiles()) {
    const path = join(dir, name);
    await writeFile(path, text);
    written.push(path);
  }
  return written;
}

/** Write the default contract (from the generated held-out sets) to `path`. */
export async function writeDefaultContract(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, await defaultContractText());
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const { values } = parseArgs({
    options: { out: { type: "string" }, contract: { type: "string" } },
    strict: true,
  });
  const root = resolve(import.meta.dirname, "../..");
  const out = resolve(values.out ?? join(root, "resources/training"));
  for (const path of await writeSeedData(out)) console.log(`wrote ${path}`);
  const contract = resolve(values.contract ?? join(root, "resources/contracts/default.json"));
  await writeDefaultContract(contract);
  console.log(`wrote ${contract}`);
}
