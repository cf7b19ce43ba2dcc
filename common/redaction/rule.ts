/** The kinds of personal data and secrets `redact()` removes, and the placeholder of each. */
export type PiiKind =
  "email" | "phone" | "card" | "iban" | "ip" | "secret" | "path" | "national-id" | "address" | "name";

export const PII_KINDS: readonly PiiKind[] = [
  "email",
  "phone",
  "card",
  "iban",
  "ip",
  "secret",
  "path",
  "national-id",
  "address",
  "name",
];

/** What replaces a finding. A path keeps its structure: only the user name becomes `[USER]`. */
export const PLACEHOLDER: Record<PiiKind, string> = {
  email: "[EMAIL]",
  phone: "[PHONE]",
  card: "[CARD]",
  iban: "[IBAN]",
  ip: "[IP]",
  secret: "[SECRET]",
  path: "[USER]",
  "national-id": "[NATIONAL_ID]",
  address: "[ADDRESS]",
  name: "[NAME]",
};

/** Called once per redacted value. */
export type Found = (kind: PiiKind) => void;

/** One redaction pass over the whole text. */
export type Pass = (text: string, found: Found) => string;

/**
 * `text.replace` with a callback that may decline a candidate (return null: keep it as is).
 * Callers pass only regexes whose every quantifier is bounded or atomic-by-construction, so a
 * pass stays linear in the text length (see the 1 MB adversarial tests).
 */
export function replaceCandidates(
  text: string,
  pattern: RegExp,
  decide: (match: string, offset: number, groups: (string | undefined)[]) => string | null,
): string {
  return text.replace(pattern, (...args: unknown[]) => {
    const match = args[0] as string;
    // replace() passes (match, ...groups, offset, whole[, namedGroups]).
    const offsetIndex = args.findIndex((a, i) => i > 0 && typeof a === "number");
    const offset = args[offsetIndex] as number;
    const groups = args.slice(1, offsetIndex) as (string | undefined)[];
    return decide(match, offset, groups) ?? match;
  });
}

/**
 * True for strings that look machine-generated (keys, tokens) rather than words: a digit, or
 * frequent switches between lower case, upper case and digits. "sk-learn-Pipeline" is prose;
 * "sk-Ab3xQ9…" is a key.
 */
export function looksRandom(s: string): boolean {
  const body = s.replace(/[^A-Za-z0-9]/g, "");
  if (body.length < 8) return false;
  const classOf = (c: string): number => (c >= "0" && c <= "9" ? 0 : c >= "a" && c <= "z" ? 1 : 2);
  let switches = 0;
  let digits = 0;
  for (let i = 0; i < body.length; i++) {
    const k = classOf(body[i]!);
    if (k === 0) digits++;
    if (i > 0 && k !== classOf(body[i - 1]!)) switches++;
  }
  if (digits >= 2 && digits < body.length) return true;
  return switches / body.length >= 0.2;
}
