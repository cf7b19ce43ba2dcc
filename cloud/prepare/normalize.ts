/**
 * Text normalization shared by the near-duplicate check, the held-out split and the thumbs-down
 * lookup: two texts that differ only in case, whitespace or punctuation are the same text here.
 */

/** A chat turn as the datasets write it. */
export interface Message {
  role: "system" | "user" | "assistant";
  content: string;
}

/**
 * Lower case, punctuation (Unicode \p{P}) as a space, runs of whitespace as one space, trimmed.
 * Symbols (+ = < > $ …) are kept: "2+2" and "2*2" are different questions. NFKC first, so
 * full-width and composed forms compare equal to their plain forms.
 */
export function normalizeText(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/\p{P}+/gu, " ")
    .replace(/\s+/gu, " ")
    .trim();
}

/**
 * The identity of a prompt: its non-system turns, role-tagged and normalized. The system turn
 * is left out because it carries recalled memories and settings that change between turns of
 * the same question; the question and the history before it are what makes it "the same prompt".
 */
export function promptKey(prompt: readonly Message[]): string {
  return prompt
    .filter((m) => m.role !== "system")
    .map((m) => `${m.role}: ${normalizeText(m.content)}`)
    .join("\n");
}

/** The key of "this answer to this prompt" (prompt key + normalized answer). */
export function answerKey(prompt: readonly Message[], answer: string): string {
  return `${promptKey(prompt)}\u0000${normalizeText(answer)}`;
}
