/**
 * The demo model's vocabulary: one token per byte, spelled the way GPT-2's byte-level BPE
 * spells bytes (its byte-to-unicode table), then the ChatML control tokens. With no merges
 * every byte sequence tokenizes to exactly one token per byte.
 */

export const BYTE_TOKEN_COUNT = 256;

/** Control tokens after the bytes: ids 256, 257 (EOS), 258 (BOS). */
export const CONTROL_TOKENS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>"] as const;
export const IM_START_ID = 256;
export const EOS_ID = 257;
export const BOS_ID = 258;

const TOKEN_TYPE_NORMAL = 1;
const TOKEN_TYPE_CONTROL = 3;

/** GPT-2's `bytes_to_unicode`: printable bytes map to themselves, the rest to U+0100 onwards. */
export function gpt2ByteToUnicode(): string[] {
  const printable = (b: number) =>
    (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const out: string[] = new Array<string>(256);
  let next = 0;
  for (let b = 0; b < 256; b++) {
    out[b] = String.fromCodePoint(printable(b) ? b : 256 + next++);
  }
  return out;
}

export interface ByteVocabulary {
  readonly tokens: string[];
  readonly tokenTypes: number[];
  readonly bosId: number;
  readonly eosId: number;
}

export function byteVocabulary(): ByteVocabulary {
  const tokens = [...gpt2ByteToUnicode(), ...CONTROL_TOKENS];
  const tokenTypes = tokens.map((_, i) => (i < BYTE_TOKEN_COUNT ? TOKEN_TYPE_NORMAL : TOKEN_TYPE_CONTROL));
  return { tokens, tokenTypes, bosId: BOS_ID, eosId: EOS_ID };
}

/**
 * Output-logit bias per token id. Lower-case letters and space are favoured so the text looks
 * like words; other printable ASCII is allowed but rarer; control bytes, non-ASCII bytes (which
 * would make invalid UTF-8) and the control tokens (EOS!) are made practically impossible.
 */
export function outputBias(): Float32Array {
  const bias = new Float32Array(BYTE_TOKEN_COUNT + CONTROL_TOKENS.length);
  for (let b = 0; b < BYTE_TOKEN_COUNT; b++) {
    const lower = b >= 0x61 && b <= 0x7a;
    if (lower) bias[b] = 4;
    else if (b === 0x20) bias[b] = 5;
    else if (b > 0x20 && b < 0x7f) bias[b] = -4;
    else bias[b] = -20;
  }
  for (let i = 0; i < CONTROL_TOKENS.length; i++) bias[BYTE_TOKEN_COUNT + i] = -30;
  return bias;
}
