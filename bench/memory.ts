/**
 * Stateful memory numbers:
 *  (a) conversation search p50/p95 at 10k, 100k and 1M messages (real migrations, real FTS5
 *      search code, synthetic messages inserted in one transaction per size step);
 *  (b) committing one message (the user-message transaction of a turn) p50/p95 at those sizes;
 *  (c) time to first token on turn 1 vs turn 50 of one conversation, real engine through core;
 *  (d) reopening a long conversation in a new engine process, with and without its saved state.
 *
 *   npm run bench -- memory
 *   MACARON_BENCH_MESSAGES=10000,100000 npm run bench -- memory     (smaller sizes)
 *   MACARON_BENCH_MODEL=bench npm run bench -- memory               (the ~99M model for c, d)
 */
import type { Database } from "better-sqlite3";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isTinyModelSize } from "../native/gguf/tiny-model";
import { writeFixtures } from "../native/gguf/fixtures";
import type { Conversation, Message } from "../electron/api";
import { ConversationSearch } from "../electron/core/conversations/conversation-search";
import { ConversationStore } from "../electron/core/conversations/conversation-store";
import { MessageStore } from "../electron/core/conversations/message-store";
import { DATABASE_FILE, openDatabase } from "../electron/core/db/database";
import { spawnNodeEngine } from "../electron/core/engine/spawn-node";
import { EngineSupervisor } from "../electron/core/engine/supervisor";
import type { ChatTurn } from "../electron/core/engine/types";
import { createCore, type Core } from "../electron/core";
import { DEFAULT_SYSTEM_PROMPT } from "../electron/core/chat/turn-pipeline";
import { mulberry32 } from "../common/prng";
import { median, percentile, report, type BenchRow } from "./stats";
import { value } from "../testing/core/result-value";
import { promptTokensEvaluated } from "../testing/core/turn-timings";

const ENV = { ...process.env, MACARON_ENGINE_THREADS: "1" };
const ctx = { transport: "http" } as const;

/** A 5,000-word vocabulary drawn with a Zipf-like skew, like real text: few common, many rare. */
const VOCAB = Array.from({ length: 5000 }, (_, i) => {
  const r = mulberry32(i + 1);
  const len = 3 + Math.floor(r() * 7);
  return Array.from({ length: len }, () => String.fromCharCode(97 + Math.floor(r() * 26))).join("");
});
function sentence(r: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(VOCAB[Math.floor(VOCAB.length * r() ** 3)]!);
  return out.join(" ");
}

/** Insert `count` messages (20 per conversation) in one transaction with prepared statements. */
function fill(db: Database, from: number, count: number): number {
  const r = mulberry32(from + 7);
  const conv = db.prepare(
    "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
  );
  const msg = db.prepare(
    "INSERT INTO messages (id, conversation_id, role, content, status, created_at, seq) VALUES (?, ?, ?, ?, 'complete', ?, ?)",
  );
  const started = performance.now();
  db.transaction(() => {
    let conversationId = "";
    for (let i = from; i < from + count; i++) {
      if ((i - from) % 20 === 0) {
        conversationId = `c${i}`;
        conv.run(conversationId, sentence(r, 4), i, i);
      }
      const role = i % 2 === 0 ? "user" : "assistant";
      msg.run(`m${i}`, conversationId, role, sentence(r, role === "user" ? 12 : 40), i, (i % 20) + 1);
    }
  })();
  return performance.now() - started;
}

/** Queries of every kind: a common word, a rare one, two words, a prefix, a miss. */
function queries(): string[] {
  const r = mulberry32(99);
  const out: string[] = [];
  for (let i = 0; i < 60; i++) {
    const common = VOCAB[Math.floor(r() * 20)]!;
    const rare = VOCAB[1000 + Math.floor(r() * 4000)]!;
    out.push(
      [common, rare, `${common} ${rare}`, rare.slice(0, 3), `${rare} ${VOCAB[2000 + i]!}`, "zzzzqx"][i % 6]!,
    );
  }
  return out;
}

function benchStorage(sizes: number[]): BenchRow[] {
  const dir = mkdtempSync(join(tmpdir(), "macaron-bench-memory-"));
  const rows: BenchRow[] = [];
  try {
    const db = openDatabase(join(dir, DATABASE_FILE));
    const search = new ConversationSearch(db);
    const conversations = new ConversationStore(db);
    const messages = new MessageStore(db);
    let have = 0;
    for (const size of sizes) {
      const insertMs = fill(db, have, size - have);
      const inserted = size - have;
      have = size;
      const searchMs: number[] = [];
      const hits: number[] = [];
      for (const q of queries()) {
        const t = performance.now();
        hits.push(search.search(q).length);
        searchMs.push(performance.now() - t);
      }
      // One turn's user-message commit (what chat.send waits for), fsync included (synchronous=FULL).
      const target = conversations.create("append bench");
      const appendMs: number[] = [];
      for (let i = 0; i < 50; i++) {
        const t = performance.now();
        db.transaction(() => {
          conversations.touch(target.id);
          messages.append({
            conversationId: target.id,
            role: "user",
            content: sentence(mulberry32(i), 12),
            status: "complete",
          });
        })();
        appendMs.push(performance.now() - t);
      }
      have += 50;
      rows.push({
        name: `${size.toLocaleString("en")} messages`,
        insertS: insertMs / 1000,
        insertRowsPerS: (inserted / insertMs) * 1000,
        dbMiB: statSync(join(dir, DATABASE_FILE)).size / 2 ** 20,
        searchP50Ms: median(searchMs),
        searchP95Ms: percentile(searchMs, 95),
        medianHits: median(hits),
        appendP50Ms: median(appendMs),
        appendP95Ms: percentile(appendMs, 95),
      });
      console.log(`storage: ${size} messages done`);
    }
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

async function send(core: Core, conversationId: string, text: string, maxTokens: number): Promise<Message> {
  const done = new Promise<Message>((resolve) => {
    const off = core.subscribe((event, payload) => {
      const p = payload as { conversationId?: string; message?: Message };
      if (event === "chat.done" && p.conversationId === conversationId) {
        off();
        resolve(p.message!);
      }
    });
  });
  value(
    await core.dispatch("chat.send", { conversationId, text, sampling: { temperature: 0, maxTokens } }, ctx),
  );
  return done;
}

interface TurnsOptions {
  /** The engine process's environment (e.g. flash attention on). */
  env?: NodeJS.ProcessEnv;
  /** Appended to every row name: what these rows were measured under. */
  label?: string;
  /** Memories stored before the conversation; each question then names one of their topics. */
  memories?: readonly { text: string; topic: string }[];
}

/** Stored memories whose retrieval ranking changes from one question to the next. */
const BENCH_MEMORIES = [
  { text: "The user has two cats called Tom and Jerry", topic: "cats" },
  { text: "The user lives in Oslo near the fjord", topic: "Oslo" },
  { text: "The user runs every Saturday morning", topic: "running" },
  { text: "The user is learning to play the cello", topic: "cello" },
  { text: "The user is allergic to peanuts", topic: "peanuts" },
];

/** (c): turn 1 vs turn 50 of one conversation through core (prompt building, engine, database). */
async function benchTurns(model: string, turns: number, options: TurnsOptions = {}): Promise<BenchRow[]> {
  const { env = ENV, label = "", memories = [] } = options;
  const dataDir = mkdtempSync(join(tmpdir(), "macaron-bench-turns-"));
  try {
    const core = await createCore({
      dataDir,
      spawnEngine: spawnNodeEngine({ env }),
      initialModel: model,
    });
    for (const memory of memories) value(await core.dispatch("memories.create", { text: memory.text }, ctx));
    const conv = value<Conversation>(await core.dispatch("conversations.create", {}, ctx));
    const results: { ttft: number; evaluated: number; context: number }[] = [];
    for (let i = 1; i <= turns; i++) {
      const topic = memories.length > 0 ? ` about ${memories[i % memories.length]!.topic}` : "";
      const message = await send(core, conv.id, `Question ${i}${topic}?`, 16);
      results.push({
        ttft: message.stats?.ttftMs ?? NaN,
        evaluated: promptTokensEvaluated(dataDir, message.id),
        context: message.stats?.contextTokens ?? 0,
      });
    }
    // The same last turn evaluated from scratch (a new engine, nothing cached): what turn 50
    // would cost if the history were evaluated again.
    const detail = value<{ messages: Message[] }>(
      await core.dispatch("conversations.get", { id: conv.id }, ctx),
    );
    const transcript = detail.messages.slice(0, -1).map((m): ChatTurn => ({ role: m.role, text: m.content }));
    await core.close();
    const scratch = new EngineSupervisor(spawnNodeEngine({ env }));
    await scratch.load(model);
    const fromScratch = await scratch.generate(
      [{ role: "system", text: DEFAULT_SYSTEM_PROMPT }, ...transcript],
      { temperature: 0, maxTokens: 16 },
      () => {},
    );
    await scratch.close();
    const row = (name: string, picked: typeof results) => ({
      name: `${name}${label}`,
      ttftMs: median(picked.map((r) => r.ttft)),
      promptTokensEvaluated: median(picked.map((r) => r.evaluated)),
      contextTokens: median(picked.map((r) => r.context)),
    });
    const first = row("turn 1", results.slice(0, 1));
    const last = row(`turn ${turns}`, results.slice(-1));
    // Single turns are noisy on a shared machine: the medians of the first and last five too.
    const early = row("turns 2-6 (median)", results.slice(1, 6));
    const late = row(`turns ${turns - 4}-${turns} (median)`, results.slice(-5));
    return [
      first,
      last,
      early,
      late,
      { name: `turn ${turns} / turn 1${label}`, ttftMs: last.ttftMs / first.ttftMs },
      {
        name: `turn ${turns} from scratch (no cache)${label}`,
        ttftMs: fromScratch.ttftMs,
        promptTokensEvaluated: fromScratch.promptTokensEvaluated,
        contextTokens: fromScratch.contextTokens,
      },
    ];
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** (d): a ~contextSize-filling conversation reopened by a new engine process. */
async function benchReopen(model: string, runs: number): Promise<BenchRow[]> {
  const stateDir = mkdtempSync(join(tmpdir(), "macaron-bench-kv-"));
  const engineWith = (withState: boolean) =>
    new EngineSupervisor(spawnNodeEngine({ env: ENV }), withState ? { stateDir } : {});
  const history: ChatTurn[] = [{ role: "system", text: "You are Macaron, a helpful local assistant." }];
  // ~3.5k tokens (byte-level tokenizer: one token per character) of past turns.
  for (let i = 0; history.map((t) => t.text).join("").length < 3200; i++) {
    history.push({ role: "user", text: `Tell me about ${sentence(mulberry32(i), 20)}` });
    history.push({ role: "assistant", text: sentence(mulberry32(i + 1000), 40) });
  }
  const ask = (i: number): ChatTurn[] => [...history, { role: "user", text: `And question ${i}?` }];
  const rows: BenchRow[] = [];
  try {
    // The conversation as it was left: evaluated once, its state saved.
    const seed = engineWith(true);
    await seed.load(model);
    await seed.generate(ask(0), { temperature: 0, maxTokens: 8, sessionKey: "long" }, () => {});
    await seed.close();
    for (const withState of [false, true]) {
      const ttft: number[] = [];
      const evaluated: number[] = [];
      for (let run = 1; run <= runs; run++) {
        const engine = engineWith(withState);
        await engine.load(model);
        const result = await engine.generate(
          ask(run),
          { temperature: 0, maxTokens: 8, sessionKey: withState ? "long" : undefined },
          () => {},
        );
        ttft.push(result.ttftMs ?? NaN);
        evaluated.push(result.promptTokensEvaluated);
        if (run === runs)
          rows.push({
            name: withState ? "reopen with saved state" : "reopen, no saved state",
            ttftMs: median(ttft),
            ttftP95Ms: percentile(ttft, 95),
            promptTokensEvaluated: median(evaluated),
            contextTokens: result.contextTokens,
          });
        await engine.close();
      }
    }
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
  return rows;
}

export async function benchMemory(options: { runs: number }): Promise<void> {
  const sizes = (process.env.MACARON_BENCH_MESSAGES ?? "10000,100000,1000000")
    .split(",")
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0)
    .sort((a, b) => a - b);
  const size = process.env.MACARON_BENCH_MODEL ?? "small";
  if (!isTinyModelSize(size)) throw new Error(`MACARON_BENCH_MODEL must be a fixture size, not ${size}`);
  const fixtures = mkdtempSync(join(tmpdir(), "macaron-bench-fixtures-"));
  try {
    const { basePath } = await writeFixtures(fixtures, { size });
    const storage = benchStorage(sizes);
    const turns = await benchTurns(basePath, 50);
    // The same with llama.cpp's flash attention, which the engine leaves off on CPU.
    const turnsFlash = await benchTurns(basePath, 50, {
      env: { ...ENV, MACARON_FLASH_ATTENTION: "on" },
      label: " [flash attn]",
    });
    // With memories recalled on every turn (ranked differently for each question).
    const turnsMemories = await benchTurns(basePath, 50, {
      memories: BENCH_MEMORIES,
      label: " [5 memories]",
    });
    const reopen = await benchReopen(basePath, Math.max(3, options.runs));
    report("memory", [...storage, ...turns, ...turnsFlash, ...turnsMemories, ...reopen], {
      model: size,
      sizes,
      goal: "turn 50 TTFT within 1.5x of turn 1",
    });
  } finally {
    rmSync(fixtures, { recursive: true, force: true });
  }
}
