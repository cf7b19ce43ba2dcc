/**
 * Test inputs for the training tests: the tiny demo base (native/gguf/tiny-model.ts) and small
 * chat datasets in the cloud export's JSONL format.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tinyModelSpec } from "../../../native/gguf/tiny-model";
import { writeGguf } from "../../../native/gguf/writer";
import type { ChatMessage } from "../../../cloud/training/dataset-file";

/** Writes the tiny base as `dir/base.gguf` and returns its path. */
export async function writeTinyBase(dir: string): Promise<string> {
  const path = join(dir, "base.gguf");
  await writeGguf(path, tinyModelSpec("tiny"));
  return path;
}

/** SFT line `i`: a short question and its answer. */
export function sftLine(i: number, system?: string): string {
  const messages: ChatMessage[] = [
    ...(system ? [{ role: "system" as const, content: system }] : []),
    { role: "user", content: `What is ${i} plus ${i}?` },
    { role: "assistant", content: `It is ${2 * i}.` },
  ];
  return JSON.stringify({ messages });
}

/** Preference line `i`: the right sum chosen, a wrong one rejected. */
export function preferenceLine(i: number): string {
  return JSON.stringify({
    prompt: [{ role: "user", content: `What is ${i} plus ${i}?` }],
    chosen: [{ role: "assistant", content: `It is ${2 * i}.` }],
    rejected: [{ role: "assistant", content: `It is ${2 * i + 1}.` }],
  });
}

/** Writes `lines` as `dir/name` (JSONL) and returns its path. */
export async function writeJsonl(dir: string, name: string, lines: string[]): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, lines.map((l) => `${l}\n`).join(""));
  return path;
}

/** `n` SFT lines. */
export function sftLines(n: number): string[] {
  return Array.from({ length: n }, (_, i) => sftLine(i));
}
