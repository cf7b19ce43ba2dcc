/**
 * Whether an on-by-default setting from the environment is switched off: "0", "off", "false" or
 * "no" (any case). Unset or anything else leaves it on (MACARON_ENGINE_AFFINITY,
 * MACARON_ENGINE_KV_GROWTH).
 */
export function switchedOff(value: string | undefined): boolean {
  return ["0", "off", "false", "no"].includes((value ?? "").toLowerCase());
}

/**
 * Whether an off-by-default setting from the environment is switched on: "1", "on", "true" or
 * "yes" (any case). Unset or anything else leaves it off (MACARON_ENGINE_HUGEPAGES).
 */
export function switchedOn(value: string | undefined): boolean {
  return ["1", "on", "true", "yes"].includes((value ?? "").toLowerCase());
}
