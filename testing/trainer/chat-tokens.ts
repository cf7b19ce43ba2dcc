/** The tiny fixtures' ChatML control tokens (byte tokens 0-255, then these two). */
export const IM_START = 256;
export const IM_END = 257;

/** A ChatML turn as byte tokens with the control tokens: what training data looks like. */
export function chatTokens(user: string, answer: string): number[] {
  const bytes = (s: string) => [...Buffer.from(s, "utf8")];
  return [
    IM_START,
    ...bytes("user\n" + user),
    IM_END,
    ...bytes("\n"),
    IM_START,
    ...bytes("assistant\n" + answer),
    IM_END,
  ];
}

/** One short exchange and where its answer starts: the parity tests' training line. */
export const PARITY_TOKENS = chatTokens("Hi there, what is 2+2?", "It is 4.");
export const PARITY_PROMPT_LENGTH = chatTokens("Hi there, what is 2+2?", "").length - 1;
