import { writeFile } from "node:fs/promises";

/**
 * Small tokenized datasets for the trainer tests, in the shared JSONL format: byte tokens
 * (id = byte value) with the tiny models' ChatML control tokens.
 */

export const IM_START = 256;
export const IM_END = 257;

/** One SFT line: the loss covers ids[start:]. */
export function sftLine(ids: readonly number[], start: number): object {
  return { kind: "sft", ids, start };
}

/** The tokens of `text` under the byte vocabulary. */
export function bytes(text: string): number[] {
  return [...Buffer.from(text, "utf8")];
}

/** A ChatML user turn and the assistant header: the prompt of one example. */
export function chatPrompt(user: string): number[] {
  return [IM_START, ...bytes(`user\n${user}`), IM_END, ...bytes("\n"), IM_START, ...bytes("assistant\n")];
}

/** An SFT example: the prompt, then the answer and <|im_end|> (the loss part). */
export function chatExample(user: string, answer: string): object {
  const prompt = chatPrompt(user);
  return sftLine([...prompt, ...bytes(answer), IM_END], prompt.length);
}

const ANIMALS = ["cat", "dog", "fish", "bird", "frog", "lion", "bear", "wolf", "duck", "goat"];

/** `n` short question/answer examples with a learnable pattern (the count and animal repeat). */
export function countingExamples(n: number): object[] {
  return Array.from({ length: n }, (_, i) => {
    const animal = ANIMALS[i % ANIMALS.length]!;
    const count = ((i * 7) % 9) + 1;
    return chatExample(`How many ${animal}s? ${count}`, `There are ${count} ${animal}s.`);
  });
}

/** Preference pairs: the chosen answer echoes the animal, the rejected one refuses. */
export function preferencePairs(n: number): object[] {
  return Array.from({ length: n }, (_, i) => {
    const animal = ANIMALS[i % ANIMALS.length]!;
    return {
      kind: "dpo",
      prompt: chatPrompt(`Say ${animal}`),
      chosen: [...bytes(`${animal}!`), IM_END],
      rejected: [...bytes("No."), IM_END],
    };
  });
}

/** Writes objects as JSONL (or raw lines given as strings). */
export async function writeJsonl(path: string, lines: readonly (object | string)[]): Promise<string> {
  await writeFile(path, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n");
  return path;
}
