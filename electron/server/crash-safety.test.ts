/**
 * Crash safety with real processes: the headless server (and its engine child) is killed with
 * SIGKILL, again and again, while it commits messages and streams answers into one growing data
 * folder. Afterwards the database must be intact, hold every message whose chat.send was
 * answered, and, after one more start, have no answer left "streaming".
 *
 * The server runs from an esbuild bundle of these sources (cli.js + engine.js, the layout of the
 * packaged app) rather than through tsx: tsx's compile costs ~4 s per start, the bundle starts
 * in ~2 s (3.3 s under CI's load, 5.4 s per kill in all).
 *
 * MACARON_CRASH_ITERATIONS sets the number of kills. The default, 30, is the test tier's size:
 * three conversations of 10 turns, six kills while a send is being committed, six in the middle
 * of a long answer (~3 minutes under CI's load). The soak at 200 kills and more is a benchmark:
 * `npm run bench -- crash-soak --kills 200` (bench/crash-soak.ts) runs this file at that size.
 */
import Database from "better-sqlite3";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as Esbuild from "esbuild";
import WebSocket from "ws";
import { ensureFixtureModel } from "../../native/gguf/fixtures";
import { DATABASE_FILE } from "../core/db/database";
import { suiteDir } from "../../testing/core/temp-dir";
import { formatCrashSummary } from "../../testing/server/crash-summary";

const ITERATIONS = Number(process.env.MACARON_CRASH_ITERATIONS ?? 30);
const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
/** A new conversation every this many iterations, so both long and fresh ones are exercised. */
const TURNS_PER_CONVERSATION = 10;

interface Server {
  proc: ChildProcess;
  url: string;
  key: string;
  exited: Promise<void>;
}

interface Sent {
  iteration: number;
  conversationId: string;
  text: string;
  userMessageId: string;
  assistantMessageId: string;
  /** What the WebSocket showed of the answer before the kill. */
  seen: string;
}

const work = suiteDir("macaron-crash-");
let dataDir: string;
let model: string;
let bundleDir: string;
const running = new Set<Server>();

/** Bundle the server and engine entries next to each other, inside the repo so bare imports resolve. */
async function bundle(): Promise<string> {
  const outdir = join(ROOT, "node_modules/.cache/macaron-crash-safety", String(process.pid));
  await mkdir(outdir, { recursive: true });
  // esbuild is tsx's own compiler: resolved through tsx, it is always there when tsx is.
  const fromTsx = createRequire(createRequire(import.meta.url).resolve("tsx"));
  const esbuild = fromTsx("esbuild") as typeof Esbuild;
  await esbuild.build({
    entryPoints: { cli: join(ROOT, "electron/server/cli.ts"), engine: join(ROOT, "native/engine/main.ts") },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outdir,
    packages: "external",
    logLevel: "warning",
  });
  return outdir;
}

async function startServer(): Promise<Server> {
  const proc = spawn(
    process.execPath,
    [
      join(bundleDir, "cli.js"),
      "--port",
      "0",
      "--data-dir",
      dataDir,
      "--model",
      model,
      "--max-tokens",
      "2000",
    ],
    {
      cwd: ROOT,
      // Its own process group: one SIGKILL to -pid takes the server and the engine child.
      detached: true,
      env: { ...process.env, MACARON_ENGINE_THREADS: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const exited = new Promise<void>((done) => proc.once("exit", () => done()));
  let stderr = "";
  proc.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const server = await new Promise<Server>((resolveServer, reject) => {
    let out = "";
    proc.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const match = /api key: ([0-9a-f]+)[^\n]*\nlistening on (http:\/\/\S+)\/\?code=/.exec(out);
      if (match) resolveServer({ proc, url: match[2]!, key: match[1]!, exited });
    });
    void exited.then(() => reject(new Error(`server exited before listening:\n${out}\n${stderr}`)));
  });
  if (/could not load/.test(stderr)) throw new Error(`the model did not load:\n${stderr}`);
  running.add(server);
  return server;
}

/** SIGKILL the server's whole process group and wait until every process in it is gone. */
async function killGroup(server: Server): Promise<void> {
  const pid = server.proc.pid!;
  process.kill(-pid, "SIGKILL");
  await server.exited;
  // The engine is the server's child, not ours: no exit event reaches us; ask the kernel.
  for (;;) {
    try {
      process.kill(-pid, 0);
    } catch {
      break;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  running.delete(server);
}

async function call<T>(server: Server, method: string, input: unknown): Promise<T> {
  const response = await fetch(`${server.url}/api/call/${method}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  const body = (await response.json()) as { ok: boolean; value?: T; error?: { message: string } };
  if (!body.ok) throw new Error(`${method}: ${body.error?.message}`);
  return body.value as T;
}

/** The event stream, with a way to wait for the first delta of a message. */
async function events(server: Server) {
  const ws = new WebSocket(`${server.url.replace("http", "ws")}/api/events`, {
    headers: { authorization: `Bearer ${server.key}` },
  });
  const text = new Map<string, string>();
  const waiters = new Map<string, () => void>();
  ws.on("message", (raw: Buffer) => {
    const { event, payload } = JSON.parse(raw.toString()) as {
      event: string;
      payload: Record<string, unknown>;
    };
    if (event !== "chat.delta" && event !== "chat.done") return;
    const id =
      event === "chat.delta" ? (payload.messageId as string) : (payload.message as { id: string }).id;
    if (event === "chat.delta") text.set(id, (text.get(id) ?? "") + (payload.delta as string));
    waiters.get(id)?.();
  });
  ws.on("error", () => undefined); // the server dies under it
  await new Promise<void>((done, reject) => {
    ws.once("open", () => done());
    ws.once("error", reject);
  });
  return {
    text: (id: string) => text.get(id) ?? "",
    /** Resolves at the first delta (or the end) of message `id`. */
    started: (id: string) =>
      text.has(id) ? Promise.resolve() : new Promise<void>((done) => waiters.set(id, done)),
    close: () => ws.terminate(),
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  dataDir = join(work.path, "data");
  model = await ensureFixtureModel(join(work.path, "models"));
  bundleDir = await bundle();
}, 60_000);

afterAll(async () => {
  for (const server of [...running]) await killGroup(server);
  if (bundleDir) await rm(bundleDir, { recursive: true, force: true });
});

describe(`the server killed with SIGKILL ${ITERATIONS} times`, () => {
  it(
    "keeps the database intact and every acknowledged message",
    async () => {
      const sent: Sent[] = [];
      let conversationId = "";
      let unacknowledged = 0;
      let startMs = 0;
      const started = performance.now();
      for (let i = 0; i < ITERATIONS; i++) {
        const t0 = performance.now();
        const server = await startServer();
        startMs += performance.now() - t0;
        const stream = await events(server);
        if (i % TURNS_PER_CONVERSATION === 0) {
          conversationId = (await call<{ id: string }>(server, "conversations.create", {})).id;
        }
        const text = `message ${i}: tell me a long story about crash number ${i}`;
        const send = call<{ userMessage: { id: string }; assistantMessage: { id: string } }>(
          server,
          "chat.send",
          {
            conversationId,
            text,
            sampling: { temperature: 0.8 },
          },
        );
        let acknowledged: Awaited<typeof send> | null = null;
        if (i % 5 === 4) {
          // Killed while the send is being committed: it may or may not have been acknowledged.
          void send.then((v) => (acknowledged = v)).catch(() => undefined);
          await pause(Math.random() * 30);
        } else {
          acknowledged = await send;
          await stream.started(acknowledged.assistantMessage.id);
          // Mostly within the first 300 ms of streaming; every 4th answer long enough for its
          // partial text to have been flushed (every 500 ms).
          await pause(i % 4 === 3 ? 700 + Math.random() * 300 : Math.random() * 300);
        }
        await killGroup(server);
        await send.catch(() => undefined);
        if (acknowledged) {
          const { userMessage, assistantMessage } = acknowledged;
          sent.push({
            iteration: i,
            conversationId,
            text,
            userMessageId: userMessage.id,
            assistantMessageId: assistantMessage.id,
            seen: stream.text(assistantMessage.id),
          });
        } else {
          unacknowledged++;
        }
        stream.close();
      }
      const killedMs = performance.now() - started;

      // One more start: answers cut off by the kills are marked interrupted; then a clean stop.
      const last = await startServer();
      const stopped = last.exited;
      process.kill(last.proc.pid!, "SIGTERM");
      await stopped;
      running.delete(last);

      const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true });
      try {
        expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
        const message = db.prepare("SELECT role, content, status FROM messages WHERE id = ?");
        let partial = 0;
        for (const s of sent) {
          expect(message.get(s.userMessageId), `user message of iteration ${s.iteration}`).toEqual({
            role: "user",
            content: s.text,
            status: "complete",
          });
          const answer = message.get(s.assistantMessageId) as {
            role: string;
            content: string;
            status: string;
          };
          expect(answer.role).toBe("assistant");
          expect(["interrupted", "complete"]).toContain(answer.status);
          // The saved text and what the client saw are both prefixes of the one answer.
          const [shorter, longer] =
            answer.content.length <= s.seen.length ? [answer.content, s.seen] : [s.seen, answer.content];
          expect(longer.startsWith(shorter), `answer of iteration ${s.iteration}`).toBe(true);
          if (answer.status === "interrupted" && answer.content.length > 0) partial++;
        }
        const streaming = db
          .prepare("SELECT count(*) AS n FROM messages WHERE status = 'streaming'")
          .get() as {
          n: number;
        };
        expect(streaming.n).toBe(0);
        // Partially streamed answers are kept, not dropped.
        expect(partial).toBeGreaterThan(0);
        expect(sent.length).toBeGreaterThanOrEqual(Math.floor((ITERATIONS * 4) / 5));
        console.info(
          formatCrashSummary({
            kills: ITERATIONS,
            seconds: killedMs / 1000,
            msPerKill: killedMs / ITERATIONS,
            startMs: startMs / ITERATIONS,
            acknowledged: sent.length,
            unacknowledged,
            partialKept: partial,
          }),
        );
      } finally {
        db.close();
      }
    },
    // ~5.4 s per kill under CI's load: room for nearly three times that.
    Math.max(30 * 60_000, ITERATIONS * 15_000),
  );
});
