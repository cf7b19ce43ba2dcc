/**
 * The specialist domains: the one list of the built-in ones, and the rule for a team's own.
 * Seed data, the demo build, the default contract, the cloud service and the demo files read
 * BUILTIN_DOMAINS; a team adds a domain by publishing an adapter whose manifest names it (the
 * cloud then accepts its feedback) or with `npm run cloud -- --domains …`, and by tagging
 * contract cases with it (the gate judges a domain by its tagged cases).
 */
export const BUILTIN_DOMAINS = ["chat", "coding", "agent", "ui"] as const;
export type BuiltinDomain = (typeof BUILTIN_DOMAINS)[number];

/** A domain name: lower-case letters, digits and dashes, 1–32 characters, starting with a letter. */
export const DOMAIN_NAME = /^[a-z][a-z0-9-]{0,31}$/;

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
  const bad = names.find((n) => !DOMAIN_NAME.test(n));
  if (bad !== undefined)
    throw new Error(
      `"${bad}" is not a domain name (lower-case letters, digits and dashes, starting with a letter)`,
    );
  return names;
}
