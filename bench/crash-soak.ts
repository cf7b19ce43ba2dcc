/**
 * `npm run bench -- crash-soak [--kills 200] [--rounds 1]`: the crash-safety test at soak size.
 *
 * `electron/server/crash-safety.test.ts` kills the headless server (and its engine) with SIGKILL
 * while it commits messages and streams answers, then checks the database: intact, every
 * acknowledged message kept, no answer left "streaming". The test tier runs it with 30 kills
 * (its default, ~3 minutes under CI's load); this runs the same file with MACARON_CRASH_ITERATIONS
 * set, once per round, and records what each round printed (kills, time per kill and per start,
 * acknowledged messages, partial answers kept) in bench/results/crash-soak.json. A round that
 * fails is a row with `verdict: "failed"` (and its numbers, when it got as far as printing them),
 * and the exit fails too.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { report, type BenchRow } from "./stats";

const ROOT = resolve(import.meta.dirname, "..");
const TEST = "electron/server/crash-safety.test.ts";

/** The test's summary line: `crash-safety: N kills in S s (M ms each, of which start-up U ms); …`. */
const SUMMARY =
  /crash-safety: (\d+) kills in ([\d.]+) s \((\d+) ms each, of which start-up (\d+) ms\); (\d+) acknowledged, (\d+) killed before the answer, (\d+) partial answers kept/;

export interface SoakRound extends BenchRow {
  name: string;
  verdict: "passed" | "failed";
  kills: number;
  seconds: number;
  msPerKill: number;
  startMs: number;
  acknowledged: number;
  unacknowledged: number;
  partialKept: number;
}

/** Parse one run's output; null when the summary line is missing (the test failed before it). */
export function parseSoakOutput(output: string): Omit<SoakRound, "name" | "verdict"> | null {
  const m = SUMMARY.exec(output);
  if (!m) return null;
  const n = m.slice(1).map(Number);
  return {
    kills: n[0]!,
    seconds: n[1]!,
    msPerKill: n[2]!,
    startMs: n[3]!,
    acknowledged: n[4]!,
    unacknowledged: n[5]!,
    partialKept: n[6]!,
  };
}

function runOnce(kills: number): Promise<{ code: number; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn("npx", ["vitest", "run", TEST], {
      cwd: ROOT,
      env: { ...process.env, MACARON_CRASH_ITERATIONS: String(kills) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const keep = (chunk: Buffer) => {
      output += chunk.toString();
      process.stderr.write(chunk);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.once("error", fail);
    child.once("close", (code) => done({ code: code ?? 1, output }));
  });
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { kills: { type: "string", default: "200" }, rounds: { type: "string", default: "1" } },
    strict: false,
  });
  const kills = Number(values.kills);
  const rounds = Number(values.rounds);
  if (!(Number.isInteger(kills) && kills > 0 && Number.isInteger(rounds) && rounds > 0))
    throw new Error("--kills and --rounds take positive integers");
  const rows: SoakRound[] = [];
  for (let r = 1; r <= rounds; r++) {
    const { code, output } = await runOnce(kills);
    const parsed = parseSoakOutput(output);
    rows.push({
      name: `round ${r}`,
      verdict: code === 0 && parsed ? "passed" : "failed",
      ...(parsed ?? { kills }),
    } as SoakRound);
  }
  report("crash-soak", rows, { kills, rounds });
  if (rows.some((r) => r.verdict === "failed")) process.exitCode = 1;
}
