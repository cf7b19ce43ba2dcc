/**
 * The specialist domains: the one list of the built-in ones, and the one rule for a domain's name.
 * Seed data, the demo build, the demo adapters, the default contract, the cloud service and the
 * demo files read BUILTIN_DOMAINS; a team adds a domain by publishing an adapter whose manifest
 * names it (the cloud then accepts its feedback) or with `npm run cloud -- --domains …`, and by
 * tagging contract cases with it (the gate judges a domain by its tagged cases).
 *
 * Every entry point that takes a domain's name checks it with DOMAIN_NAME (through DomainName or
 * domainNameProblem): the adapter manifest's schema (the app installing an adapter, the registry's
 * publish endpoint), the cloud's feedback check and export paths, and `--domains`. A name is
 * accepted by all of them or refused by all of them; publishing is the first to refuse it.
 */
import { z } from "zod";

export const BUILTIN_DOMAINS = ["chat", "coding", "agent", "ui"] as const;
export type BuiltinDomain = (typeof BUILTIN_DOMAINS)[number];

/**
 * A domain's name: a lower-case letter, then lower-case letters, digits, '_' and '-', 64
 * characters at most. It names files (`<domain>.jsonl`) and URL paths (`/v1/export/<domain>.jsonl`)
 * as it is, so no dots, slashes, spaces or capitals.
 */
export const DOMAIN_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

/** DOMAIN_NAME in words, for error messages. */
export const DOMAIN_NAME_RULE =
  "lower-case letters, digits, '_' and '-', starting with a letter, at most 64 characters";

/** Whether `name` is a domain's name (DOMAIN_NAME). */
export const isDomainName = (name: string): boolean => DOMAIN_NAME.test(name);

/** Why `name` is not a domain's name, or null when it is one. */
export function domainNameProblem(name: string): string | null {
  return isDomainName(name) ? null : `${JSON.stringify(name)} is not a domain name (${DOMAIN_NAME_RULE})`;
}

/** A domain's name in a zod schema (the adapter manifest, the registry's publish manifest). */
export const DomainName = z.string().regex(DOMAIN_NAME, `not a domain name (${DOMAIN_NAME_RULE})`);

/** Whether `name` is one of the built-in domains. */
export const isBuiltinDomain = (name: string): name is BuiltinDomain =>
  (BUILTIN_DOMAINS as readonly string[]).includes(name);

/** The domains a service accepts feedback about. */
export interface DomainCheck {
  has(domain: string): boolean;
}

/**
 * The domains of `--domains a,b`: each checked against DOMAIN_NAME. Throws with the bad name.
 */
export function parseDomainList(text: string): string[] {
  const names = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of names) {
    const problem = domainNameProblem(name);
    if (problem !== null) throw new Error(problem);
  }
  return names;
}
