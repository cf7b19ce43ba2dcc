/**
 * `npm run bench -- flakiness [--rounds N] [--busy K] [--project slow] [FILE_FILTER…]`: how often
 * does each test file of the engine tier fail when nothing in it changed (issue 32, item 4)?
 *
 * Each round runs the tier once the way CI does (`vitest run --project slow`, its two workers)
 * while K other processes keep K cores busy (default 1: the load the CI issue asks for), and
 * records every file's verdict and every failed test's name. Rounds append one JSON line each to
 * bench/flakiness-rounds.jsonl, which is committed: a round takes 15–20 minutes here, 20 rounds
 * do not fit one session, so the count of runs per file grows across sessions (each line names
 * its commit, so a failure is read against the code it ran). The table printed at the end (and
 * written to bench/results/flakiness.json) sums every recorded round:
 * runs, failures and the failing tests per file.
 *
 *   npm run bench -- flakiness --rounds 2                  # two rounds of the whole slow tier
 *   npm run bench -- flakiness --rounds 5 native/engine    # only files whose path contains it
 *   npm run bench -- flakiness --rounds 0                  # just the table of what is recorded
 *   --project fast  another vitest project;  --record FILE  another rounds file (a trial run)
 */
import { spawn } from "node:child_process";
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";

const ROOT = resolve(import.meta.dirname, "..");
export const ROUNDS_FILE = join(ROOT, "bench", "flakiness-rounds.jsonl");

/** The part of vitest's JSON report a round reads (vitest 4, `--reporter=json`). */
const VitestReport = z.object({
  testResults: z.array(
    z.object({
      name: z.string(),
      status: z.string(),
      message: z.string().optional(),
      assertionResults: z.array(z.object({ fullName: z.string(), status: z.string() })),
    }),
  ),
});

export const Round = z.object({
  head: z.string(),
  startedAt: z.string(),
  seconds: z.number(),
  busyCores: z.number().int(),
  load: z.tuple([z.number(), z.number()]),
  /** Files of the round, by path from the repository root, each with its verdict. */
  files: z.record(
    z.string(),
    z.object({ ok: z.boolean(), failed: z.array(z.string()), message: z.string().optional() }),
  ),
});
export type Round = z.infer<typeof Round>;

export interface FileSummary {
  file: string;
  runs: number;
  failures: number;
  /** Failing test names with how many rounds each failed in, and the commits of those rounds. */
  failedTests: Record<string, { count: number; heads: string[] }>;
}

/** Reads a vitest JSON report into a round's files (paths relative to `root`). */
export function filesOfReport(report: unknown, root: string): Round["files"] {
  const parsed = VitestReport.parse(report);
  const files: Round["files"] = {};
  for (const result of parsed.testResults) {
    const failed = result.assertionResults.filter((a) => a.status === "failed").map((a) => a.fullName);
    const ok = result.status === "passed" && failed.length === 0;
    // A file that fails outside any test (an import error, a hook) has no failed test: say so.
    if (!ok && failed.length === 0) failed.push("(the file itself)");
    files[relative(root, result.name)] = {
      ok,
      failed,
      ...(ok || !result.message ? {} : { message: result.message.slice(0, 500) }),
    };
  }
  return files;
}

/** Sums rounds per file: runs, failed rounds, and which tests failed in which commits. */
export function summarize(rounds: readonly Round[]): FileSummary[] {
  const byFile = new Map<string, FileSummary>();
  for (const round of rounds) {
    for (const [file, verdict] of Object.entries(round.files)) {
      const summary = byFile.get(file) ?? { file, runs: 0, failures: 0, failedTests: {} };
      summary.runs += 1;
      if (!verdict.ok) summary.failures += 1;
      for (const name of verdict.failed) {
        const entry = summary.failedTests[name] ?? { count: 0, heads: [] };
        entry.count += 1;
        if (!entry.heads.includes(round.head)) entry.heads.push(round.head);
        summary.failedTests[name] = entry;
      }
      byFile.set(file, summary);
    }
  }
  return [...byFile.values()].sort((a, b) => b.failures - a.failures || a.file.localeCompare(b.file));
}

/** Every recorded round; a line that does not parse is named and skipped, never fatal. */
export async function readRounds(path = ROUNDS_FILE): Promise<Round[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const rounds: Round[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    const parsed = Round.safeParse(safeJson(line));
    if (parsed.success) rounds.push(parsed.data);
    else console.error(`${path}:${i + 1}: not a round, skipped (${parsed.error.issues[0]?.message})`);
  });
  return rounds;
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}

function run(command: string, args: string[]): Promise<number> {
  return new Promise((resolveExit, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
    child.once("error", reject);
    child.once("exit", (code, signal) => resolveExit(code ?? (signal ? 128 : 1)));
  });
}

async function gitHead(): Promise<string> {
  const child = spawn("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.once("exit", done));
  return code === 0 ? out.trim() : "unknown";
}

/** K processes that each keep one core busy until stopped. */
function busyCores(count: number): () => void {
  const children = Array.from({ length: count }, () =>
    spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }),
  );
  return () => children.forEach((child) => child.kill("SIGKILL"));
}

async function oneRound(options: { project: string; filters: string[]; busy: number }): Promise<Round> {
  const dir = await mkdtemp(join(tmpdir(), "macaron-flakiness-"));
  const report = join(dir, "report.json");
  const stopBusy = busyCores(options.busy);
  const startedAt = new Date();
  const load0 = loadavg()[0] ?? 0;
  try {
    const vitest = join(ROOT, "node_modules", ".bin", "vitest");
    await run(vitest, [
      "run",
      "--project",
      options.project,
      ...options.filters,
      "--reporter=default",
      "--reporter=json",
      `--outputFile.json=${report}`,
    ]);
    const files = filesOfReport(JSON.parse(await readFile(report, "utf8")), ROOT);
    if (Object.keys(files).length === 0) throw new Error("the round ran no test file (check the filters)");
    return {
      head: await gitHead(),
      startedAt: startedAt.toISOString(),
      seconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
      busyCores: options.busy,
      load: [round2(load0), round2(loadavg()[0] ?? 0)],
      files,
    };
  } finally {
    stopBusy();
    await rm(dir, { recursive: true, force: true });
  }
}

const round2 = (value: number) => Math.round(value * 100) / 100;

export async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      rounds: { type: "string", default: "1" },
      busy: { type: "string", default: "1" },
      project: { type: "string", default: "slow" },
      record: { type: "string", default: ROUNDS_FILE },
    },
  });
  const rounds = Number(values.rounds);
  const busy = Number(values.busy);
  if (!Number.isInteger(rounds) || rounds < 0) throw new Error(`--rounds must be a whole number ≥ 0`);
  if (!Number.isInteger(busy) || busy < 0) throw new Error(`--busy must be a whole number ≥ 0`);
  for (let i = 1; i <= rounds; i++) {
    const round = await oneRound({ project: values.project, filters: positionals, busy });
    await appendFile(values.record, `${JSON.stringify(round)}\n`);
    const failed = Object.values(round.files).filter((f) => !f.ok).length;
    console.log(
      `round ${i}/${rounds} at ${round.head}: ${Object.keys(round.files).length} files, ${failed} failed, ` +
        `${round.seconds} s, load ${round.load[0]}→${round.load[1]}`,
    );
  }

  const all = await readRounds(values.record);
  const summary = summarize(all);
  await mkdir(join(ROOT, "bench", "results"), { recursive: true });
  await writeFile(
    join(ROOT, "bench", "results", "flakiness.json"),
    `${JSON.stringify({ rounds: all.length, files: summary }, null, 2)}\n`,
  );
  const runs = summary.map((s) => s.runs);
  const flaky = summary.filter((s) => s.failures > 0);
  console.log(
    `${all.length} rounds recorded; ${summary.length} files, runs per file ${runs.length > 0 ? `${Math.min(...runs)}–${Math.max(...runs)}` : "none"}; ` +
      `${flaky.length} files failed at least once`,
  );
  for (const s of flaky) {
    console.log(`  ${s.file}: ${s.failures}/${s.runs}`);
    for (const [name, entry] of Object.entries(s.failedTests))
      console.log(`    ${entry.count}× ${name} (at ${entry.heads.join(", ")})`);
  }
}
