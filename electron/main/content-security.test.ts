import { describe, expect, it } from "vitest";
import { contentSecurityPolicy, PRODUCTION_CSP } from "./content-security";

function directives(csp: string): Map<string, string> {
  return new Map(csp.split("; ").map((d) => [d.split(" ")[0] ?? "", d.slice(d.indexOf(" ") + 1)]));
}

describe("contentSecurityPolicy", () => {
  it("is strict in production", () => {
    const d = directives(contentSecurityPolicy(null));
    expect(contentSecurityPolicy(null)).toBe(PRODUCTION_CSP);
    expect(d.get("default-src")).toBe("'self'");
    expect(d.get("script-src")).toBe("'self'");
    expect(d.get("style-src")).toBe("'self' 'unsafe-inline'");
    expect(d.get("img-src")).toBe("'self' data:");
    expect(d.get("connect-src")).toBe("'self'");
    expect(d.get("object-src")).toBe("'none'");
    expect(d.get("base-uri")).toBe("'none'");
  });

  it("widens only script-src and connect-src for the dev server", () => {
    const d = directives(contentSecurityPolicy("http://localhost:5173"));
    expect(d.get("script-src")).toBe("'self' 'unsafe-inline'");
    expect(d.get("connect-src")).toBe("'self' http://localhost:5173 ws://localhost:5173");
    expect(d.get("default-src")).toBe("'self'");
    expect(d.get("object-src")).toBe("'none'");
  });
});
