/**
 * `npm run bench -- demo-suggestions`: which prompts the tiny demo answers *right*, through the
 * app's own chat (core's chat.send with automatic routing and the app's default sampling, as a
 * user sending it from the empty chat), so that the empty chat only suggests those.
 *
 * Candidates are wordings each specialist was trained on (resources/training/<domain>.train.jsonl):
 * the demo is a 0.7M-parameter model and answers little else well, which the empty chat says.
 * Each candidate is sent RUNS times; an answer is right when the router picks the specialist and
 * the answer passes checks built from the trained reference (the contract's own assertions):
 *   chat    plain text that mentions the reference's key words;
 *   coding  a code block in the reference's language holding the reference's code (whitespace aside);
 *   agent   a numbered plan with the reference's number of steps, covering its steps;
 *   ui      a valid GenUI document with the reference's component and its labels.
 * Writes bench/results/demo-suggestions.json (every candidate's rate) and
 * resources/demo/suggestions.json (the best PER_DOMAIN per specialist with at least MIN_PASSES
 * of RUNS right), which the renderer shows.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Message } from "../electron/api";
import { DEMO_TEMPERATURE } from "../electron/core/chat/turn-plan";
import { checkCase } from "../electron/core/contract/check-case";
import type { Assertion } from "../electron/core/contract/contract-schema";
import { EventRecorder } from "../testing/core/events";
import { value } from "../testing/core/result-value";
import { openDemoCore } from "./demo";
import { report } from "./stats";

const DOMAINS = ["chat", "coding", "agent", "ui"] as const;
type Domain = (typeof DOMAINS)[number];
const CANDIDATES = Number(process.env.BENCH_CANDIDATES ?? 8);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const MIN_PASSES = Math.ceil(RUNS * 0.8);
const PER_DOMAIN = 3;
/**
 * The demo's temperature in the app ("Try the demo model": DEMO_TEMPERATURE); BENCH_TEMPERATURE
 * compares another (0.7 was the app's default before).
 */
const TEMPERATURE = Number(process.env.BENCH_TEMPERATURE ?? DEMO_TEMPERATURE);
const ctx = { transport: "ipc" } as const;
const root = resolve(import.meta.dirname, "..");

const STOP = new Set(
  "the and for are but not you your with this that from have has can will just even more some very also into than them they then what when where which while about after before make made helps help great good".split(
    " ",
  ),
);

/** The reference's most telling words: the longest that are not common ones. */
function keyWords(text: string, n: number): string[] {
  const words = [...new Set(text.toLowerCase().match(/[a-z][a-z'-]{3,}/g) ?? [])].filter((w) => !STOP.has(w));
  return words.sort((a, b) => b.length - a.length).slice(0, n);
}

interface Candidate {
  domain: Domain;
  prompt: string;
  reference: string;
  assertions: Assertion[];
}

/** Checks of a right answer, from the trained reference; null when the reference is not of a kind judged here. */
function assertionsFor(domain: Domain, reference: string): Assertion[] | null {
  const routed: Assertion = { type: "routesTo", adapter: domain };
  if (domain === "chat") {
    const words = keyWords(reference, 3);
    return [
      routed,
      { type: "plainText" },
      { type: "mentions", terms: words.map((w) => [w]), min: Math.max(1, words.length - 1) },
    ];
  }
  if (domain === "coding") {
    const fence = /```(\w+)\n([\s\S]*?)```/.exec(reference);
    if (!fence?.[2]?.trim()) return null;
    // Right = the taught code itself (whitespace aside): a block that only defines the function
    // (`def factorial(n): return s.upper()`) is wrong, and a suggestion must be answered right.
    const code = fence[2]
      .trim()
      .split(/\s+/)
      .map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join("\\s*");
    return [routed, { type: "codeBlock", language: fence[1]! }, { type: "regex", pattern: code }];
  }
  if (domain === "agent") {
    const steps = reference.split("\n").filter((l) => /^\d+\. /.test(l));
    if (steps.length < 2) return null;
    return [
      routed,
      { type: "numberedPlan", minSteps: steps.length, maxSteps: steps.length },
      {
        type: "mentions",
        terms: steps.map((s) => keyWords(s, 1)).filter((w) => w.length > 0),
        min: steps.length - 1,
      },
    ];
  }
  let doc: { blocks?: { kind: string; root?: { type: string; props?: Record<string, unknown> } }[] };
  try {
    doc = JSON.parse(reference) as typeof doc;
  } catch {
    return null;
  }
  const rootNode = doc.blocks?.find((b) => b.kind === "ui")?.root;
  if (!rootNode) return null;
  const texts = Object.values(rootNode.props ?? {})
    .filter((v): v is string => typeof v === "string" && v.length <= 40)
    .slice(0, 3);
  return [
    routed,
    { type: "genuiDocument", components: [rootNode.type] },
    { type: "genuiContains", component: rootNode.type, texts, numbers: [] },
  ];
}

function candidates(): Candidate[] {
  const out: Candidate[] = [];
  for (const domain of DOMAINS) {
    const lines = readFileSync(join(root, "resources/training", `${domain}.train.jsonl`), "utf8").split("\n");
    let taken = 0;
    for (const line of lines) {
      if (!line.trim() || taken >= CANDIDATES) continue;
      const { messages } = JSON.parse(line) as { messages: { role: string; content: string }[] };
      const prompt = messages.find((m) => m.role === "user")?.content;
      const reference = messages.find((m) => m.role === "assistant")?.content;
      if (!prompt || !reference || messages.length !== 2) continue;
      const assertions = assertionsFor(domain, reference);
      if (!assertions) continue;
      out.push({ domain, prompt, reference, assertions });
      taken++;
    }
  }
  return out;
}

/** What the checks read: a UI answer's document as JSON, else the text. */
function answerText(m: Message): string {
  return m.format === "ui" && m.ui ? JSON.stringify(m.ui) : m.content;
}

export async function benchDemoSuggestions(): Promise<void> {
  const { core, dispose } = await openDemoCore("macaron-bench-suggestions-");

  const events = new EventRecorder((l) => core.subscribe(l));
  const rows: { name: string; domain: Domain; prompt: string; passes: number; runs: number; why: string }[] =
    [];
  try {
    for (const c of candidates()) {
      let passes = 0;
      let why = "";
      for (let r = 0; r < RUNS; r++) {
        const conversation = value<{ id: string }>(await core.dispatch("conversations.create", {}, ctx));
        const sent = value<{ assistantMessage: Message }>(
          await core.dispatch(
            "chat.send",
            {
              conversationId: conversation.id,
              text: c.prompt,
              sampling: { temperature: TEMPERATURE },
            },
            ctx,
          ),
        );
        const id = sent.assistantMessage.id;
        const done = events.of("chat.done").find((d) => d.message.id === id);
        const answer = (done ?? (await events.next("chat.done", (d) => d.message.id === id))).message;
        const routedTo = answer.routing?.adapters.map((a) => a.id) ?? [];
        const check = await checkCase(
          { mode: "auto", assertions: c.assertions },
          { output: answerText(answer), adapters: routedTo, latencyMs: 0, stopReason: "eos" },
        );
        if (check.pass) passes++;
        else why ||= check.reason;
      }
      rows.push({
        name: `${c.domain}: ${c.prompt.slice(0, 48)}`,
        domain: c.domain,
        prompt: c.prompt,
        passes,
        runs: RUNS,
        why,
      });
      if (process.env.BENCH_VERBOSE) console.error(`${c.domain} ${passes}/${RUNS} ${c.prompt} ${why}`);
    }
  } finally {
    await dispose();
  }
  const chosen = DOMAINS.flatMap((domain) =>
    rows
      .filter((r) => r.domain === domain && r.passes >= MIN_PASSES)
      .sort((a, b) => b.passes - a.passes)
      .slice(0, PER_DOMAIN)
      .map((r) => ({ specialist: domain, prompt: r.prompt, passes: r.passes, runs: r.runs })),
  );
  const byDomain = Object.fromEntries(
    DOMAINS.map((d) => {
      const mine = rows.filter((r) => r.domain === d);
      const right = mine.reduce((n, r) => n + r.passes, 0);
      return [d, { candidates: mine.length, answersRight: right, answers: mine.length * RUNS }];
    }),
  );
  writeFileSync(
    join(root, "resources/demo/suggestions.json"),
    JSON.stringify(
      {
        measuredBy: "npm run bench -- demo-suggestions",
        rule: `right in at least ${MIN_PASSES} of ${RUNS} answers through the app's chat (auto routing, default sampling)`,
        suggestions: chosen,
      },
      null,
      2,
    ) + "\n",
  );
  report(
    "demo-suggestions",
    rows.map((r) => ({ name: r.name, value: r.passes / r.runs, unit: "right" })),
    { runs: RUNS, minPasses: MIN_PASSES, byDomain, chosen, candidates: rows },
  );
}
