/**
 * Whether an on-by-default setting from the environment is switched off: "0", "off", "false" or
 * "no" (any case). Unset or anything else leaves it on (MACARON_ENGINE_HUGEPAGES,
 * MACARON_ENGINE_AFFINITY).
 */
export function switchedOff(value: string | undefined): boolean {
  return ["0", "off", "false", "no"].includes((value ?? "").toLowerCase());
}
