import { createHash } from "node:crypto";
import { CATALOG_VERSION, catalogJsonSchema } from "../api/genui";
import { DEFAULT_SYSTEM_PROMPT } from "./chat/turn-pipeline";
import { DEFAULT_CONTRACT_LABEL } from "./contract/default-contract";
import { GENUI_INSTRUCTIONS } from "../../common/prompts";
import {
  FALLBACK_ADAPTER_ID,
  KERNEL_TEMPERATURE,
  LEARNED_EXAMPLE_WEIGHT,
  LOW_CONFIDENCE_THRESHOLD,
  MAX_BLEND_SCALE,
  MAX_LEARNED_PER_ADAPTER,
} from "./router";

/**
 * The harness version stamped on every turn: app version + a short hash of what shapes an
 * answer besides the model (prompt templates, router constants, the evaluation contract).
 * Model and harness evolve as one unit, so a stored turn says exactly what produced it.
 */

/** The default evaluation contract (resources/contracts/default.json), by name@version. */
export const CONTRACT_PLACEHOLDER = DEFAULT_CONTRACT_LABEL;

/** Everything the hash covers, by name. Computed once at start-up. */
export function harnessParts(
  systemPrompt: string = DEFAULT_SYSTEM_PROMPT,
  contract: string = CONTRACT_PLACEHOLDER,
): Record<string, string> {
  return {
    systemPrompt,
    router: JSON.stringify({
      LOW_CONFIDENCE_THRESHOLD,
      LEARNED_EXAMPLE_WEIGHT,
      MAX_LEARNED_PER_ADAPTER,
      FALLBACK_ADAPTER_ID,
      KERNEL_TEMPERATURE,
      MAX_BLEND_SCALE,
    }),
    contract,
    // The component catalog (version, full schema) and the UI-mode instructions.
    genui: JSON.stringify({
      version: CATALOG_VERSION,
      schema: catalogJsonSchema(),
      prompt: GENUI_INSTRUCTIONS,
    }),
  };
}

/** `0.1.0+3f9a2c1b7d04`: app version, "+", the first 12 hex digits of sha256 over the parts. */
export function harnessVersion(appVersion: string, parts: Record<string, string> = harnessParts()): string {
  const hash = createHash("sha256");
  // Sorted, length-prefixed: the same parts always give the same hash, and no two differ alike.
  for (const key of Object.keys(parts).sort()) {
    const value = parts[key] ?? "";
    hash.update(`${key.length}:${key}${value.length}:${value}`);
  }
  return `${appVersion}+${hash.digest("hex").slice(0, 12)}`;
}
