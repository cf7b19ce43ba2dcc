/**
 * The markdown limits against the hostile generator: every pathological answer is refused by
 * the linear pre-pass (so react-markdown never sees it), every answer just inside the limits is
 * parsed, and parsing those stays bounded. Rendered with React's server renderer (no DOM needed).
 */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { lineNesting, markdownVerdict, MARKDOWN_MAX_CHARS, MARKDOWN_MAX_NESTING } from "./markdown-limits";
import { SafeMarkdownView } from "./safe-markdown";
import { edgeMarkdown, hostileMarkdown } from "../testing/hostile-markdown";
import { scaledBudget } from "../../../testing/core/calibrated-budget";

const platform = { openExternal: null } as unknown as Parameters<typeof SafeMarkdownView>[0]["platform"];

describe("markdownVerdict", () => {
  it.each(hostileMarkdown(20_000).map((c) => [c.name, c.text] as const))(
    "shows %s as plain text, with a reason",
    (_name, text) => {
      const verdict = markdownVerdict(text);
      expect(verdict.markdown).toBe(false);
      if (!verdict.markdown) expect(verdict.reason).toMatch(/longer|deeper|more than/);
    },
  );

  it("at 2,000 characters a run is refused or cheap to parse (unlimited, most crashed or froze)", () => {
    for (const c of hostileMarkdown(2_000)) {
      if (!markdownVerdict(c.text).markdown) continue;
      const budget = scaledBudget(1_000);
      const start = performance.now();
      renderToStaticMarkup(<SafeMarkdownView text={c.text} platform={platform} />);
      expect(performance.now() - start, c.name).toBeLessThan(Math.max(budget, scaledBudget(1_000)));
    }
  });

  it.each(edgeMarkdown().map((c) => [c.name, c.text] as const))(
    "parses %s, just inside the limits",
    (_n, text) => {
      expect(markdownVerdict(text)).toEqual({ markdown: true });
    },
  );

  it("judges a 1,000,000-character answer and the longest one it lets through (its cost: npm run bench -- markdown)", () => {
    expect(markdownVerdict("*a ".repeat(333_334)).markdown).toBe(false);
    // Every line scanned to the end: lines of words up to the length limit, one list item each.
    const line = `- ${"word ".repeat(400)}`;
    const count = Math.floor(MARKDOWN_MAX_CHARS / (line.length + 1));
    const longest = Array.from({ length: count }, () => line).join("\n");
    expect(longest.length).toBeGreaterThan(MARKDOWN_MAX_CHARS * 0.9);
    expect(markdownVerdict(longest).markdown).toBe(true);
  });

  it("counts quotes, list markers and indentation as nesting", () => {
    expect(lineNesting("plain")).toBe(0);
    expect(lineNesting("> > quote")).toBe(2);
    expect(lineNesting("- 1. * item")).toBe(3);
    expect(lineNesting("    - indented")).toBe(3);
    expect(lineNesting("-not a list")).toBe(0);
    expect(lineNesting("*emphasis*")).toBe(0);
    expect(markdownVerdict(`${"> ".repeat(MARKDOWN_MAX_NESTING)}x`).markdown).toBe(true);
    expect(markdownVerdict(`${"> ".repeat(MARKDOWN_MAX_NESTING + 1)}x`).markdown).toBe(false);
  });
});

describe("SafeMarkdownView under the limits", () => {
  it("renders every hostile answer as its plain text with a note, without parsing it", () => {
    for (const c of hostileMarkdown(20_000)) {
      const html = renderToStaticMarkup(<SafeMarkdownView text={c.text} platform={platform} />);
      expect(html, c.name).toContain("Shown as plain text:");
      expect(html, c.name).not.toContain("<blockquote");
      expect(html, c.name).not.toContain("<em>");
    }
  });

  it("parses an ordinary answer as markdown", () => {
    const html = renderToStaticMarkup(
      <SafeMarkdownView text={"> a **quote**\n\n- one\n  - two"} platform={platform} />,
    );
    expect(html).toContain("<blockquote>");
    expect(html).toContain("<strong>quote</strong>");
    expect(html).not.toContain("Shown as plain text");
  });

  it("parses each answer just inside the limits without throwing, in bounded time", () => {
    const timings: Record<string, number> = {};
    const budget = scaledBudget(3_000);
    for (const c of edgeMarkdown()) {
      const start = performance.now();
      const html = renderToStaticMarkup(<SafeMarkdownView text={c.text} platform={platform} />);
      timings[c.name] = Math.round(performance.now() - start);
      expect(html, c.name).not.toContain("Shown as plain text");
    }
    // Generous (React's development build) and scaled to the machine; the Chromium e2e holds the
    // real frame budget. Before the limits, the hostile corpus took minutes or overflowed the stack.
    expect(Math.max(...Object.values(timings)), JSON.stringify(timings)).toBeLessThan(
      Math.max(budget, scaledBudget(3_000)),
    );
  });
});
