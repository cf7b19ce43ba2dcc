/**
 * The engine child's IPC serialization: `serialization: "json"` against `"advanced"` (structured
 * clone) for the messages the engine really sends (electron/core/engine/spawn-node.ts):
 *
 * - many small "token" messages (one per batch window of a streamed answer),
 * - occasional big ones: an embedding reply (number[][]), a long conversation history sent to
 *   the engine (a generate request of ~100 turns).
 *
 * Each case forks this file as the child under both settings, interleaved (A/B, then B/A), and
 * times, in the parent, from the request to the last message of the case received (so both the
 * child's serialization and the parent's parse are in). Per message: µs for tokens, ms for the
 * big ones.
 *
 *   npm run bench -- ipc [--runs 7] [--tokens 5000]
 */
import { fork, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { median, percentile, report, type BenchRow } from "./stats";

type Serialization = "json" | "advanced";
type Case = "tokens" | "embeddings" | "history";

interface Ask {
  case: Case;
  count: number;
  /** For "history": the request the parent sends, echoed back small. */
  history?: unknown;
}

const CHILD_ENV = "MACARON_IPC_BENCH_CHILD";

// The child: answers each ask with `count` messages of its case, then "end".
if (process.env[CHILD_ENV] === "1" && process.send) {
  const send = (message: unknown) => process.send!(message);
  const vectors = Array.from({ length: 16 }, (_, i) =>
    Array.from({ length: 768 }, (_, j) => Math.sin(i + j)),
  );
  process.on("message", (raw) => {
    const ask = raw as Ask;
    for (let i = 0; i < ask.count; i++) {
      if (ask.case === "tokens") send({ type: "token", id: 7, text: " word" });
      else if (ask.case === "embeddings") send({ type: "result", id: 7, value: vectors });
      else send({ type: "result", id: 7, value: { ok: true } });
    }
    send({ type: "end" });
  });
  process.on("disconnect", () => process.exit(0));
}

function history(turns: number) {
  return Array.from({ length: turns }, (_, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    text: `Turn ${i}: ${"Some words of a long conversation, with ünïcode and numbers 12345. ".repeat(12)}`,
  }));
}

function spawnChild(serialization: Serialization): Promise<ChildProcess> {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: ["--import", tsx],
    env: { ...process.env, [CHILD_ENV]: "1" },
    serialization,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("spawn", () => resolve(child));
    child.once("error", reject);
  });
}

/** ms from sending the ask to receiving the child's "end". */
function time(child: ChildProcess, ask: Ask): Promise<number> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const onMessage = (message: { type: string }) => {
      if (message.type !== "end") return;
      child.off("message", onMessage);
      resolve(performance.now() - t0);
    };
    child.on("message", onMessage);
    if (ask.case === "history") {
      // Parent → child: the history travels with each of `count` requests.
      for (let i = 0; i < ask.count - 1; i++) child.send({ case: "history", count: 0, history: ask.history });
    }
    child.send(ask);
  });
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { runs: { type: "string", default: "7" }, tokens: { type: "string", default: "5000" } },
    strict: false,
  });
  const runs = Number(values.runs);
  const tokens = Number(values.tokens);
  const cases: { name: string; ask: Ask; unit: "µs" | "ms" }[] = [
    { name: "token message", ask: { case: "tokens", count: tokens }, unit: "µs" },
    { name: "embeddings reply (16×768)", ask: { case: "embeddings", count: 50 }, unit: "ms" },
    {
      name: "history request (100 turns)",
      ask: { case: "history", count: 50, history: history(100) },
      unit: "ms",
    },
  ];
  const children = {
    json: await spawnChild("json"),
    advanced: await spawnChild("advanced"),
  };
  const perMessage: Record<string, Record<Serialization, number[]>> = {};
  for (const c of cases) {
    perMessage[c.name] = { json: [], advanced: [] };
    // Warm both (JIT, buffers) before timing.
    for (const s of ["json", "advanced"] as const) await time(children[s], c.ask);
    for (let run = 0; run < runs; run++) {
      const order: Serialization[] = run % 2 === 0 ? ["json", "advanced"] : ["advanced", "json"];
      for (const s of order) {
        const ms = await time(children[s], c.ask);
        perMessage[c.name]![s].push((ms / c.ask.count) * (c.unit === "µs" ? 1000 : 1));
      }
    }
  }
  for (const child of Object.values(children)) child.disconnect();

  const rows: BenchRow[] = [];
  for (const c of cases) {
    const { json, advanced } = perMessage[c.name]!;
    rows.push({
      name: `${c.name}: json (${c.unit}/message)`,
      p50: median(json),
      p95: percentile(json, 95),
      ratio: 1,
    });
    rows.push({
      name: `${c.name}: advanced (${c.unit}/message)`,
      p50: median(advanced),
      p95: percentile(advanced, 95),
      ratio: median(advanced) / median(json),
    });
  }
  report("ipc", rows, { runs, tokens });
}
