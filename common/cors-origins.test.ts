import { describe, expect, it } from "vitest";
import {
  MAX_CORS_ORIGIN_LENGTH,
  parseAllowedOrigin,
  parseCorsOrigin,
  parseCorsOrigins,
} from "./cors-origins";

describe("parseAllowedOrigin (the desktop setting's entries)", () => {
  it("answers the origin as browsers send it in Origin", () => {
    expect(parseAllowedOrigin("http://localhost:5173")).toBe("http://localhost:5173");
    expect(parseAllowedOrigin("  https://App.Example/ ")).toBe("https://app.example");
    expect(parseAllowedOrigin("http://a.example:80")).toBe("http://a.example");
    expect(parseAllowedOrigin("https://a.example:8443")).toBe("https://a.example:8443");
    expect(parseAllowedOrigin("http://[::1]:3000")).toBe("http://[::1]:3000");
  });

  it("refuses *, more than one origin, and anything that is not scheme://host[:port]", () => {
    expect(() => parseAllowedOrigin("*")).toThrow(/any web page.*not allowed/);
    expect(() => parseAllowedOrigin("")).toThrow(/Enter an origin/);
    expect(() => parseAllowedOrigin("   ")).toThrow(/Enter an origin/);
    expect(() => parseAllowedOrigin("http://a.example, http://b.example")).toThrow(/one origin at a time/);
    expect(() => parseAllowedOrigin("http://a.example http://b.example")).toThrow(/one origin at a time/);
    for (const text of [
      "localhost:5173",
      "localhost",
      "null",
      "file:///home/me/page.html",
      "ftp://a.example",
      "chrome-extension://abcdefghijklmnop",
      "http://a.example/path",
      "http://a.example/?q=1",
      "http://a.example/#top",
      "http://user:secret@a.example",
      "http://",
    ])
      expect(() => parseAllowedOrigin(text), text).toThrow(/^not an origin: /);
    expect(() => parseAllowedOrigin(`http://${"a".repeat(MAX_CORS_ORIGIN_LENGTH)}.example`)).toThrow(
      /longer than/,
    );
  });

  it("follows the same rules as --cors, which alone lets * through", () => {
    expect(parseCorsOrigin("*")).toBe("*");
    expect(parseCorsOrigins("http://LOCALHOST:5173/,https://a.example")).toEqual([
      "http://localhost:5173",
      "https://a.example",
    ]);
    for (const text of ["http://a.example/path", "file:///x", "http://a.example/?q=1"]) {
      expect(() => parseCorsOrigins(text)).toThrow(/^not an origin/);
      expect(() => parseAllowedOrigin(text)).toThrow(/^not an origin/);
    }
  });
});
