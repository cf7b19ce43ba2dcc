/** The demo adapters are the built-in domains' (common/domains.ts): one each, in its order. */
import { describe, expect, it } from "vitest";
import { BUILTIN_DOMAINS } from "../../common/domains";
import { DEMO_ADAPTERS, demoAdapter } from "./adapters";

describe("the demo adapters", () => {
  it("one per built-in domain, named after it, in the registry's order", () => {
    expect(DEMO_ADAPTERS.map((a) => a.id)).toEqual([...BUILTIN_DOMAINS]);
    for (const domain of BUILTIN_DOMAINS) expect(demoAdapter(domain).domain).toBe(domain);
  });
});
