/**
 * `npm run bench -- crash-soak [--kills 200] [--rounds 1]`: the crash-safety test at soak size.
 *
 * `electron/server/crash-safety.test.ts` kills the headless server (and its engine) with SIGKILL
 * while it commits messages and streams answers, then checks the database: intact, every
 * acknowledged message kept, no answer left "streaming". The test tier runs it with 30 kills
 * (its default, ~3 minutes under CI's load); this runs the same file with MACARON_CRASH_ITERATIONS
 * set, once per round, and records what each round printed (kills, time per kill and per start,
 * acknowledged messages, partial answers kept: testing/server/crash-summary.ts, the one format of
 * that line) in bench/results/crash-soak.json. A round that fails is a row with
 * `verdict: "failed"` and only the kills asked for (the test prints its numbers once its checks
 * passed), and the exit fails too.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { parseCrashSummary } from "../testing/server/crash-summary";
import { report, type BenchRow } from "./stats";

const ROOT = resolve(import.meta.dirname, "..");
const TEST = "electron/server/crash-safety.test.ts";

/** One round: its verdict and, when the test printed them, its numbers (CrashSummary). */
export type SoakRound = BenchRow & { verdict: "passed" | "failed" };

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
  // The test's first kill in a long answer is its fourth (it checks a partial answer was kept).
  if (!(Number.isInteger(kills) && kills >= 4 && Number.isInteger(rounds) && rounds > 0))
    throw new Error("--kills takes an integer of at least 4, --rounds a positive integer");
  const rows: SoakRound[] = [];
  for (let r = 1; r <= rounds; r++) {
    const { code, output } = await runOnce(kills);
    const parsed = parseCrashSummary(output);
    rows.push({
      name: `round ${r}`,
      verdict: code === 0 && parsed ? "passed" : "failed",
      ...(parsed ?? { kills }),
    });
  }
  report("crash-soak", rows, { kills, rounds });
  if (rows.some((r) => r.verdict === "failed")) process.exitCode = 1;
}
