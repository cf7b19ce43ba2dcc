/**
 * The held-out split: a pure function of the prompt, so the same prompt lands on the same side
 * in every export, for every dataset type, whatever else the store holds.
 */
import { createHash } from "node:crypto";

export type Split = "train" | "heldout";
export const SPLITS: readonly Split[] = ["train", "heldout"];

/** Default share of prompts kept out of training. */
export const DEFAULT_HELDOUT_SHARE = 0.1;

/** Versioned so a future change of the rule is a visible, deliberate re-split. */
const SALT = "macaron-heldout-v1\u0000";

/** A prompt key's position in [0, 1): the first 48 bits of its SHA-256. */
export function splitPosition(key: string): number {
  const digest = createHash("sha256")
    .update(SALT + key)
    .digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/** Heldout when the key's position is below `share` (0 = nothing held out, 1 = everything). */
export function splitOf(key: string, share: number): Split {
  return splitPosition(key) < share ? "heldout" : "train";
}
