/**
 * Removes personal data and secrets from text before it may leave the machine (feedback
 * uploads), and re-checks exports in the cloud service (`containsPii`). Self-contained: no
 * Node or project imports, so the cloud service and scripts can use it as is.
 *
 * Every pattern is linear-ish: bounded quantifiers, maximal digit runs, lookbehinds that stop
 * a match from starting inside a longer run. redaction.test.ts runs 1 MB adversarial inputs.
 * Placeholders contain no digits, '@', ':' or path separators; with the fixed-point loop below
 * `redact` is idempotent.
 */
import { redactAddresses } from "./redaction/addresses";
import { redactEmails, redactHomePaths } from "./redaction/identity";
import { redactNames } from "./redaction/names";
import { redactNationalIds } from "./redaction/national-ids";
import { redactIps } from "./redaction/network";
import { redactCards, redactIbans, redactPhones } from "./redaction/numbers";
import { type Pass, type PiiKind, PII_KINDS, PLACEHOLDER } from "./redaction/rule";
import { redactSecrets } from "./redaction/secrets";

export { PII_KINDS, PLACEHOLDER, type PiiKind };

export interface RedactionFinding {
  kind: PiiKind;
  count: number;
}

export interface RedactionResult {
  text: string;
  /** One entry per kind found, in PII_KINDS order; empty when nothing was redacted. */
  findings: RedactionFinding[];
}

/**
 * Order matters: secrets first (a password can hold an '@', a JWT dots), home paths before
 * numbers, IBANs and cards before phones (a grouped card number looks like a long phone
 * number), IPv6 before IPv4; national ids before phones (a spaced SIN is digit groups too);
 * names last (a street or an email may hold one: the whole is redacted first).
 */
const PASSES: readonly Pass[] = [
  redactSecrets,
  redactHomePaths,
  redactEmails,
  redactIbans,
  redactCards,
  redactNationalIds,
  redactIps,
  redactPhones,
  redactAddresses,
  redactNames,
];

const MAX_ROUNDS = 4;

/**
 * Replace emails, phones, card numbers, IBANs, IPs, secrets, home-folder user names, national
 * identity numbers, street addresses and personal names with placeholders.
 */
export function redact(text: string): RedactionResult {
  const counts = new Map<PiiKind, number>();
  const found = (kind: PiiKind): void => void counts.set(kind, (counts.get(kind) ?? 0) + 1);
  // A placeholder changes the context of what follows it ("a@b.com/home/bob": the path is
  // preceded by "]" once the email is gone), so the passes run again until nothing changes:
  // the result is a fixed point, hence idempotent. Text without findings takes one round.
  let out = text;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const before = out;
    for (const pass of PASSES) out = pass(out, found);
    if (out === before) break;
  }
  const findings = PII_KINDS.filter((k) => counts.has(k)).map((kind) => ({ kind, count: counts.get(kind)! }));
  return { text: out, findings };
}

/** True when `redact` would change the text (used to re-check data before export). */
export function containsPii(text: string): boolean {
  return redact(text).findings.length > 0;
}
