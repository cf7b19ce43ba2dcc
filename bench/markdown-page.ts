/**
 * `npm run bench -- markdown-page [--runs N]`: the hostile-markdown frame budget in Chromium.
 * Runs e2e/hostile-markdown.spec.ts's "without freezing" test N times (Playwright, Debian's
 * Chromium, headless mode) and reads the MARKDOWN_FRAMES line each run prints: the longest
 * main-thread task and frame gap while the hostile conversation opens, and again after a reload,
 * and how long typing took to land. Judged against the budget the test states (500 ms on a quiet
 * machine); writes bench/results/markdown-page.json.
 */
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { type BenchRow, median, report } from "./stats";

interface Frames {
  budgetMs: number;
  measured: Record<string, { longestTask: number; longestGap: number; typedMs: number }>;
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { runs: { type: "string", default: "3" } },
    strict: false,
  });
  const runs = Number(values.runs);
  const samples: Frames[] = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(
      "npx",
      ["playwright", "test", "e2e/hostile-markdown.spec.ts", "-g", "without freezing", "--reporter=line"],
      { encoding: "utf8", env: process.env },
    );
    const line = `${r.stdout}\n${r.stderr}`.split("\n").find((l) => l.includes("MARKDOWN_FRAMES "));
    if (!line) throw new Error(`run ${i + 1} printed no MARKDOWN_FRAMES line:\n${r.stdout}\n${r.stderr}`);
    samples.push(JSON.parse(line.slice(line.indexOf("MARKDOWN_FRAMES ") + 16)) as Frames);
  }
  await Promise.resolve();
  const budget = samples[0]!.budgetMs;
  const rows: BenchRow[] = ["open", "reload"].map((label) => {
    const task = samples.map((s) => s.measured[label]!.longestTask);
    const gap = samples.map((s) => s.measured[label]!.longestGap);
    const typed = samples.map((s) => s.measured[label]!.typedMs);
    return {
      name: label,
      runs: samples.length,
      "longest task ms (median)": median(task),
      "longest task ms (max)": Math.max(...task),
      "longest frame gap ms (median)": median(gap),
      "longest frame gap ms (max)": Math.max(...gap),
      "typing landed ms (median)": median(typed),
      "budget ms": budget,
      "within budget": Math.max(...task, ...gap) < budget ? "yes" : "no",
    };
  });
  report("markdown-page", rows, { samples });
}
