/**
 * A deterministic generator of pathological markdown: the shapes that blanked or froze the UI
 * in the headless probe (runs of quote markers, emphasis runs of tens of thousands of
 * characters, deeply nested lists) and their relatives (link, backtick, table and entity runs,
 * mixtures). Used by the limit tests, the bench of what react-markdown costs, and the Chromium
 * e2e that imports a conversation of these answers. No randomness: the same `size` gives the
 * same corpus everywhere.
 */

export interface HostileCase {
  /** Stable name, shown by tests when a case misbehaves. */
  name: string;
  text: string;
}

function lines(count: number, line: (i: number) => string): string {
  return Array.from({ length: count }, (_, i) => line(i)).join("\n");
}

/**
 * The corpus at `size` (the length of each run; 20,000 is "tens of thousands of characters").
 * Each case is one answer.
 */
export function hostileMarkdown(size = 20_000): HostileCase[] {
  const deep = Math.min(size, 500);
  return [
    { name: "quote-run", text: `${">".repeat(size)} deep` },
    { name: "quote-run-spaced", text: `${"> ".repeat(size)}deep` },
    { name: "quote-lines", text: lines(deep, (i) => `${">".repeat(i + 1)} level ${i}`) },
    { name: "asterisk-run", text: "*".repeat(size) },
    { name: "underscore-run", text: "_".repeat(size) },
    { name: "emphasis-openers", text: "*a".repeat(size) },
    { name: "strong-openers", text: "**a ".repeat(size / 2) },
    { name: "mixed-emphasis", text: "*_".repeat(size) + "x" + "_*".repeat(size / 2) },
    { name: "unclosed-underscore-words", text: "_a ".repeat(size) },
    { name: "list-one-line", text: `${"- ".repeat(size)}x` },
    { name: "ordered-one-line", text: `${"1. ".repeat(size / 2)}x` },
    { name: "list-indent", text: lines(deep, (i) => `${"  ".repeat(i)}- item ${i}`) },
    { name: "list-quote-mix", text: lines(deep, (i) => `${"> - ".repeat(Math.min(i, 100))}x`) },
    { name: "bracket-run", text: "[".repeat(size) },
    { name: "link-openers", text: "[a](".repeat(size / 2) },
    { name: "image-openers", text: "![".repeat(size) },
    { name: "reference-links", text: "[a]".repeat(size) + "\n\n[a]: http://x" },
    { name: "nested-links", text: "[".repeat(deep) + "x" + "](http://x)".repeat(deep) },
    { name: "backtick-run", text: "`".repeat(size) },
    { name: "backtick-openers", text: "` a".repeat(size / 2) },
    { name: "fence-run", text: lines(deep, (i) => "`".repeat(3 + (i % 7))) },
    {
      name: "table-wide",
      text: `${"|a".repeat(size / 4)}|\n${"|-".repeat(size / 4)}|\n${"|b".repeat(size / 4)}|`,
    },
    { name: "table-long", text: `|a|b|\n|-|-|\n${lines(deep, (i) => `|${i}|*x*|`)}` },
    { name: "entity-run", text: "&amp;".repeat(size / 2) },
    { name: "html-run", text: "<div>".repeat(size / 4) },
    { name: "autolink-run", text: "<http://a".repeat(size / 4) },
    { name: "heading-run", text: lines(deep, () => "#".repeat(6) + " " + "*".repeat(10)) },
    {
      name: "mixed",
      text: lines(deep / 5, (i) => `${"> ".repeat(i % 50)}- ${"*".repeat(i % 97)}[\`${"_".repeat(i % 31)}`),
    },
    { name: "long-plain-line", text: "word ".repeat(size * 2) },
  ];
}

/**
 * Answers just inside every limit of markdown-limits.ts: these are parsed as markdown, so they
 * are the slowest answers the UI ever parses, the ones the frame budget is measured on.
 */
export function edgeMarkdown(): HostileCase[] {
  const paragraphs = (count: number, block: string) =>
    Array.from({ length: count }, () => block).join("\n\n");
  return [
    { name: "edge-emphasis-openers", text: "*a".repeat(295) },
    { name: "edge-mixed-emphasis", text: "*_".repeat(140) + "x" + "_*".repeat(10) },
    { name: "edge-brackets", text: "[a]".repeat(145) + "\n\n[a]: http://x" },
    { name: "edge-backticks", text: "` a".repeat(295) },
    { name: "edge-underscore-words", text: "_a ".repeat(295) },
    { name: "edge-nesting", text: lines(120, () => `${"> ".repeat(4)}${"- ".repeat(4)}x *y*`) },
    { name: "edge-indent", text: lines(8, (i) => `${"  ".repeat(i)}- item ${i}`) },
    { name: "edge-list", text: lines(990, (i) => `- item ${i}`) },
    { name: "edge-table", text: `|a|b|\n|-|-|\n${lines(450, (i) => `|${i}|x|`)}` },
    { name: "edge-many-paragraphs", text: paragraphs(13, "*a".repeat(295)) },
    { name: "edge-long-lines", text: lines(2, () => "word ".repeat(1_990)) },
    {
      name: "edge-rich",
      text: "# Title\n\nSome **bold** and _italic_ text, a [link](https://example.com) and `code`.\n\n- one\n- two\n  - nested *x*\n\n```ts\nconst a = 1;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quote\n\n".repeat(
        130,
      ),
    },
  ];
}
