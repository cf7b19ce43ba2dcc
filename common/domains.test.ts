/**
 * One rule for a domain's name (common/domains.ts): the adapter manifest, the registry's publish
 * manifest, `--domains` and the cloud's export paths (cloud/domains.test.ts) take the same names.
 */
import { describe, expect, it } from "vitest";
import { ManifestFile } from "./adapter-manifest";
import {
  BUILTIN_DOMAINS,
  DOMAIN_NAME,
  DomainName,
  domainNameProblem,
  isDomainName,
  parseDomainList,
} from "./domains";
import { PublishManifest } from "./registry-protocol";

const GOOD = ["chat", "math", "math_v2", "legal-docs", "base", "a", "a".repeat(64), "x9"];
const BAD = [
  "",
  "legal docs",
  "Math",
  "9lives",
  "-x",
  "_x",
  "a".repeat(65),
  "../x",
  "a.b",
  "é",
  "a/b",
  " math",
];

const publishManifest = (domain: string) => ({
  id: "adapter",
  version: "1.0.0",
  name: "An adapter",
  domain,
  base: { architecture: "llama", embeddingLength: 64 },
  lineage: { parent: null, trainedFrom: "hand-built" },
});

describe("a domain's name", () => {
  it("the built-in domains follow the rule", () => {
    for (const d of BUILTIN_DOMAINS) expect(isDomainName(d), d).toBe(true);
  });

  it.each([...GOOD.map((d) => [d, true] as const), ...BAD.map((d) => [d, false] as const)])(
    "%j: taken everywhere or refused everywhere (%s)",
    (name, good) => {
      expect(DOMAIN_NAME.test(name)).toBe(good);
      expect(DomainName.safeParse(name).success).toBe(good);
      expect(domainNameProblem(name) === null).toBe(good);
      expect(ManifestFile.safeParse({ id: "a", name: "A", domain: name, version: "1" }).success).toBe(good);
      expect(PublishManifest.safeParse(publishManifest(name)).success).toBe(good);
      // --domains trims each name of its list (" math" is "math") and skips empty ones.
      if (name !== "" && name === name.trim()) {
        if (good) expect(parseDomainList(name)).toEqual([name]);
        else expect(() => parseDomainList(name)).toThrow(/is not a domain name/);
      }
    },
  );

  it("a refusal names the domain and the rule", () => {
    expect(domainNameProblem("legal docs")).toBe(
      `"legal docs" is not a domain name (lower-case letters, digits, '_' and '-', starting with a letter, at most 64 characters)`,
    );
    const parsed = PublishManifest.safeParse(publishManifest("legal docs"));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(["domain"]);
    expect(parsed.error?.issues[0]?.message).toMatch(/^not a domain name \(lower-case letters/);
  });
});
