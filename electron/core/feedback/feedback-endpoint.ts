/**
 * Where feedback may be uploaded. Nothing leaves the machine unless BOTH hold: the user chose a
 * sharing level other than "off", and an endpoint was given explicitly — by the environment
 * (MACARON_FEEDBACK_ENDPOINT, which wins) or by the user in the Privacy settings. Without one,
 * the app shows DEFAULT_FEEDBACK_ENDPOINT, a name under the reserved `.invalid` top-level domain
 * (RFC 2606) that can never resolve, and does not even try it: queued items wait on the machine.
 */
import { checkEndpoint } from "./privacy-settings";

/** Shown when no endpoint is configured; never contacted (see the module comment). */
export const DEFAULT_FEEDBACK_ENDPOINT = "https://feedback.macaron.invalid";

/** The environment variable that points the app at a feedback service. */
export const FEEDBACK_ENDPOINT_ENV = "MACARON_FEEDBACK_ENDPOINT";

export interface ResolvedEndpoint {
  /** The URL shown to the user (the default when none is configured). */
  url: string;
  /** True only for an endpoint the environment or the user gave: the only kind uploads go to. */
  explicit: boolean;
  /** Why nothing can be uploaded, when `explicit` is false. */
  problem: string | null;
}

/**
 * The effective endpoint: the environment's wins over the stored setting. A malformed
 * environment value does NOT fall back to the setting: a misconfiguration must be visible,
 * and guessing another destination for user data is not ours to do.
 */
export function resolveFeedbackEndpoint(
  envValue: string | undefined,
  stored: string | null,
): ResolvedEndpoint {
  const env = envValue?.trim();
  if (env) {
    try {
      return { url: checkEndpoint(env), explicit: true, problem: null };
    } catch (err) {
      return {
        url: DEFAULT_FEEDBACK_ENDPOINT,
        explicit: false,
        problem: `${FEEDBACK_ENDPOINT_ENV} is not usable: ${(err as Error).message}`,
      };
    }
  }
  if (stored) return { url: stored, explicit: true, problem: null };
  return {
    url: DEFAULT_FEEDBACK_ENDPOINT,
    explicit: false,
    problem: `No feedback endpoint is set, so feedback stays queued on this machine. Set one in Privacy settings or with ${FEEDBACK_ENDPOINT_ENV}.`,
  };
}
