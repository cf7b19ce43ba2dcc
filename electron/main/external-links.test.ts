import { describe, expect, it } from "vitest";
import { checkExternalUrl } from "./external-links";

describe("checkExternalUrl", () => {
  it("accepts http, https and mailto and normalizes them", () => {
    expect(checkExternalUrl("https://example.com")).toEqual({ ok: true, url: "https://example.com/" });
    expect(checkExternalUrl("http://example.com/a?b=1#c")).toEqual({
      ok: true,
      url: "http://example.com/a?b=1#c",
    });
    expect(checkExternalUrl("mailto:someone@example.com")).toEqual({
      ok: true,
      url: "mailto:someone@example.com",
    });
  });

  it.each([
    ["file:///etc/passwd", /http, https and mailto/],
    ["javascript:alert(1)", /http, https and mailto/],
    ["smb://host/share", /http, https and mailto/],
    ["https://user:pw@example.com/", /credentials/],
    ["not a url", /Not a valid link/],
    ["", /empty/],
    [42, /empty/],
    [`https://example.com/${"a".repeat(3000)}`, /too long/],
  ])("refuses %s", (url, reason) => {
    const result = checkExternalUrl(url);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });
});
