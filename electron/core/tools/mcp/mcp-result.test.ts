import { describe, expect, it } from "vitest";
import { TOOL_RESULT_MAX_CHARS } from "../../../api/tools";
import { LogRing } from "./log-ring";
import { limitText, outcomeOf, renderResult } from "./mcp-result";

describe("tool results as text", () => {
  it("keeps text, summarizes images, audio and binary resources, and adds structured content once", () => {
    expect(
      renderResult({
        content: [
          { type: "text", text: "first" },
          { type: "image", mimeType: "image/png", data: "AAAA" },
          { type: "audio", mimeType: "audio/wav", data: "AAAAAAAA" },
          { type: "resource", resource: { uri: "file:///a.txt", text: "inside" } },
          { type: "resource", resource: { uri: "file:///b.bin", mimeType: "application/zip", blob: "AAAA" } },
          { type: "resource_link", name: "doc", uri: "file:///doc" },
          { type: "hologram" },
        ],
        structuredContent: { a: 1 },
      }),
    ).toBe(
      [
        "first",
        "[image: image/png, 3 bytes, not shown]",
        "[audio: audio/wav, 6 bytes, not shown]",
        "[resource file:///a.txt]\ninside",
        "[resource file:///b.bin: application/zip, 3 bytes, not shown]",
        "[resource link: doc file:///doc]",
        "[hologram content, not shown]",
        '{"a":1}',
      ].join("\n"),
    );
    // A text part that already is the structured content is not repeated.
    expect(
      renderResult({ content: [{ type: "text", text: '{ "a": 1 }' }], structuredContent: { a: 1 } }),
    ).toBe('{ "a": 1 }');
    expect(renderResult({ structuredContent: [1, 2] })).toBe("[1,2]");
  });

  it("an isError result is an error with its text", () => {
    expect(outcomeOf({ content: [{ type: "text", text: "no such file" }], isError: true })).toEqual({
      ok: false,
      error: "no such file",
    });
    expect(outcomeOf({ content: [], isError: true })).toEqual({
      ok: false,
      error: "The tool reported an error without a message.",
    });
  });

  it("cuts at the limit, marker included, never inside a surrogate pair", () => {
    const long = "x".repeat(TOOL_RESULT_MAX_CHARS + 1);
    const cut = limitText(long);
    expect(cut.truncated).toBe(true);
    expect(cut.text.length).toBeLessThanOrEqual(TOOL_RESULT_MAX_CHARS);
    expect(limitText("x".repeat(TOOL_RESULT_MAX_CHARS))).toEqual({
      text: "x".repeat(TOOL_RESULT_MAX_CHARS),
      truncated: false,
    });
    const emoji = "😀".repeat(100);
    const small = limitText(emoji, 90);
    expect(small.text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});

describe("LogRing", () => {
  it("keeps whole stderr lines, the last N, and knows the last output", () => {
    const ring = new LogRing(3);
    ring.push("starting: x");
    ring.write("one\ntw");
    ring.write("o\nthree\n");
    expect(ring.all()).toEqual(["stderr: one", "stderr: two", "stderr: three"]);
    ring.write("partial");
    expect(ring.all().at(-1)).toBe("stderr: partial");
    expect(ring.lastOutput()).toBe("partial");
    ring.flush();
    ring.push("crashed: gone");
    expect(ring.all()).toEqual(["stderr: three", "stderr: partial", "crashed: gone"]);
    expect(ring.lastOutput()).toBe("partial");
  });
});
