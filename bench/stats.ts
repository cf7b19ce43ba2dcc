import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join, resolve } from "node:path";

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export const median = (values: number[]): number => percentile(values, 50);

export interface BenchRow {
  name: string;
  [column: string]: string | number | null;
}

/** Writes bench/results/<name>.json (with the machine it ran on) and prints a table. */
export function report(name: string, rows: BenchRow[], extra: Record<string, unknown> = {}): string {
  const dir = resolve(import.meta.dirname, "results");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memGiB: Math.round(totalmem() / 2 ** 30),
  };
  writeFileSync(
    file,
    JSON.stringify({ name, date: new Date().toISOString(), machine, ...extra, rows }, null, 2) + "\n",
  );
  console.log(`\n${name}`);
  console.table(
    rows.map((r) =>
      Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "number" ? round(v) : v])),
    ),
  );
  console.log(`results: ${file}`);
  return file;
}

function round(v: number): number {
  return Math.abs(v) >= 100 ? Math.round(v) : Math.round(v * 1000) / 1000;
}
