/**
 * Memory proposals per 40 demo turns (issue 30, item 2): the trained demo (base + specialists,
 * auto routing) answers 40 messages through core (chat.send, as the UI does), and after each
 * answer core asks the model for facts about the user in the background. Counted: the memories
 * left "proposed", with the proposal filter off (MACARON_MEMORY_PROPOSAL_FILTER=0: what the app
 * did before) and on (now). The 40 messages mix requests and questions (nothing to remember)
 * with statements about the user (something to remember).
 *
 *   npx tsx bench/memory-proposals.ts            (prints JSON; writes bench/results/memory-proposals.json)
 *   npx tsx bench/memory-proposals.ts --messages testing/memory/outsider-messages.json
 *       another user's turns ({"messages": [{"text", "aboutUser"}]}, labelled by whoever wrote
 *       them); also scores the filter's first step (`statesAboutUser`: is a proposal asked for
 *       at all) against those labels, which needs no model.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import type { Memory, Message } from "../electron/api";
import { EngineSupervisor } from "../electron/core/engine/supervisor";
import { statesAboutUser } from "../electron/core/memory/memory-text";
import { assembleCore } from "../electron/core/index";
import type { EngineQueue } from "../electron/core/models/engine-queue";
import { demoAdaptersDir, demoBasePath } from "../native/gguf/demo-files";
import { spawnTestEngine } from "../testing/engine/real-engine";
import { EventRecorder } from "../testing/core/events";
import { value } from "../testing/core/result-value";

const ctx = { transport: "http" } as const;

/** 30 requests and questions, 10 statements about the user: 40 turns. */
const REQUESTS = [
  "Write a short poem about the sea",
  "How do I reverse a list in Python?",
  "What is the capital of France?",
  "Explain recursion simply",
  "Write a function that adds two numbers",
  "Tell me a joke",
  "Summarize the plot of Hamlet",
  "What is a closure in JavaScript?",
  "Give me three tips for better sleep",
  "Translate good morning into Spanish",
  "Make a todo list app layout",
  "Search the docs for the word cache",
  "What time zone is Tokyo in?",
  "How many legs does a spider have?",
  "Write a haiku about autumn",
  "Sort these numbers: 5 3 9 1",
  "What does HTTP stand for?",
  "Show a button that says hello",
  "Explain what a LoRA adapter is",
  "Write a SQL query that counts rows",
  "What is the boiling point of water?",
  "Give me a recipe for pancakes",
  "How do I center a div?",
  "Name three planets",
  "Write a limerick about a cat",
  "What is the difference between TCP and UDP?",
  "Read the file notes.txt and list its headings",
  "Draw a form with a name field",
  "Why is the sky blue?",
  "Write a bash loop that prints 1 to 5",
];
const STATEMENTS = [
  "I live in Lyon and I work as a nurse.",
  "My name is Ana.",
  "I prefer metric units.",
  "I am vegetarian, so no meat in recipes please.",
  "My favourite language is Rust.",
  "I have two cats called Miso and Tofu.",
  "I'm learning Japanese this year.",
  "I like short answers.",
  "My daughter is five years old.",
  "I usually code in the evening.",
];

interface Turn {
  text: string;
  /** Whether the message states something lasting about the user (the writer's label). */
  aboutUser: boolean;
}

/** Every fourth turn is a statement: 40 turns, in a fixed order. */
function ownTurns(): Turn[] {
  const out: Turn[] = [];
  let r = 0;
  let s = 0;
  const count = Number(process.env.BENCH_TURNS ?? 40);
  for (let i = 0; i < count; i++)
    out.push(
      i % 4 === 3 ? { text: STATEMENTS[s++]!, aboutUser: true } : { text: REQUESTS[r++]!, aboutUser: false },
    );
  return out;
}

const MessagesFile = z.object({
  author: z.string().optional(),
  messages: z.array(z.object({ text: z.string().min(1), aboutUser: z.boolean() })).min(1),
});

/** The filter's first step against the writer's labels: is a proposal asked for at all. */
function triggerScore(turns: readonly Turn[]) {
  let asked = 0;
  let askedAboutUser = 0;
  const missed: string[] = [];
  const askedForOthers: string[] = [];
  for (const t of turns) {
    const ask = statesAboutUser(t.text);
    if (ask) asked++;
    if (ask && t.aboutUser) askedAboutUser++;
    if (!ask && t.aboutUser) missed.push(t.text);
    if (ask && !t.aboutUser) askedForOthers.push(t.text);
  }
  const aboutUser = turns.filter((t) => t.aboutUser).length;
  return {
    messages: turns.length,
    aboutUser,
    asked,
    recall: aboutUser === 0 ? null : Math.round((askedAboutUser / aboutUser) * 100) / 100,
    precision: asked === 0 ? null : Math.round((askedAboutUser / asked) * 100) / 100,
    missed,
    askedForOthers,
  };
}

interface Run {
  filter: "off" | "on";
  turns: number;
  proposals: number;
  proposalsAfterStatements: number;
  proposalsAfterRequests: number;
  examples: string[];
  seconds: number;
}

async function run(filter: "off" | "on", messages: readonly Turn[]): Promise<Run> {
  process.env.MACARON_MEMORY_PROPOSAL_FILTER = filter === "on" ? "1" : "0";
  const dataDir = await mkdtemp(join(tmpdir(), "macaron-bench-proposals-"));
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
  const events = new EventRecorder((l) => core.subscribe(l));
  const started = performance.now();
  const statementMessages = new Set<string>();
  try {
    // One conversation per 10 turns, like a user trying the demo in a few chats.
    let conversationId = "";
    for (const [i, { text, aboutUser }] of messages.entries()) {
      if (i % 10 === 0) {
        const c = value<{ id: string }>(
          await core.dispatch("conversations.create", { title: `Bench ${i / 10}` }, ctx),
        );
        conversationId = c.id;
      }
      const sent = value<{ userMessage: Message; assistantMessage: Message }>(
        await core.dispatch("chat.send", { conversationId, text }, ctx),
      );
      if (aboutUser) statementMessages.add(sent.userMessage.id);
      const answerId = sent.assistantMessage.id;
      const done = events.of("chat.done").some((d) => d.message.id === answerId)
        ? null
        : events.next("chat.done", (d) => d.message.id === answerId);
      if (done) await done;
      if (process.env.BENCH_VERBOSE) console.error(`[${filter}] turn ${i + 1} answered`);
      // The proposal for this answer waits behind foreground work, first in, first out: a
      // background generation queued now runs after it, so awaiting it means it has finished.
      await (core.engine as unknown as EngineQueue).generateInBackground(
        [{ role: "user", text: "ok" }],
        { maxTokens: 1, temperature: 0 },
        new AbortController().signal,
      );
    }
    const memories = value<Memory[]>(await core.dispatch("memories.list", {}, ctx));
    const proposed = memories.filter((m) => m.status === "proposed");
    const afterStatements = proposed.filter((m) => m.messageId && statementMessages.has(m.messageId));
    return {
      filter,
      turns: messages.length,
      proposals: proposed.length,
      proposalsAfterStatements: afterStatements.length,
      proposalsAfterRequests: proposed.length - afterStatements.length,
      examples: proposed.slice(0, 12).map((m) => m.text),
      seconds: Math.round((performance.now() - started) / 100) / 10,
    };
  } finally {
    events.dispose();
    await core.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { messages: { type: "string" } } });
  let messages = ownTurns();
  let source = "own (bench/memory-proposals.ts)";
  if (values.messages) {
    const file = MessagesFile.parse(JSON.parse(readFileSync(values.messages, "utf8")));
    messages = file.messages;
    source = `${values.messages}${file.author ? ` (${file.author})` : ""}`;
  }
  const trigger = triggerScore(messages);
  const before = await run("off", messages);
  const after = await run("on", messages);
  const result = {
    bench: "memory-proposals",
    date: new Date().toISOString(),
    source,
    trigger,
    before,
    after,
  };
  mkdirSync(join(import.meta.dirname, "results"), { recursive: true });
  writeFileSync(
    join(import.meta.dirname, "results", "memory-proposals.json"),
    JSON.stringify(result, null, 2),
  );
  console.log(JSON.stringify(result, null, 2));
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
