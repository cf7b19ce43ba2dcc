/**
 * GitHub-flavoured markdown, highlighted code and math in answers, under the same policy as
 * the rest of the markdown (safe-markdown): what renders, and what hostile input stays inert.
 * Rendered with React's server renderer (no DOM needed).
 */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import {
  markdownVerdict,
  MARKDOWN_MAX_LINE_CELLS,
  MARKDOWN_MAX_LINKS,
  MARKDOWN_MAX_MATH_MARKS,
  MARKDOWN_MAX_TABLE_CELLS,
} from "./markdown-limits";
import { SafeMarkdownView } from "./safe-markdown";
import { scaledBudget } from "../../../testing/core/calibrated-budget";

const platform = { openExternal: null } as unknown as Parameters<typeof SafeMarkdownView>[0]["platform"];
const render = (text: string) => renderToStaticMarkup(<SafeMarkdownView text={text} platform={platform} />);

describe("GitHub-flavoured markdown", () => {
  it("renders a table as <table> with header and body cells", () => {
    const html = render("| Name | Size |\n| --- | ---: |\n| a | 1 |\n| b | 2 |");
    expect(html).toContain("<table>");
    expect(html).toMatch(/<th>Name<\/th>/);
    expect(html).toMatch(/<td[^>]*>b<\/td>/);
    expect(html).not.toContain("Shown as plain text");
  });

  it("renders a task list with disabled checkboxes, checked where the item is done", () => {
    const html = render("- [x] done\n- [ ] to do");
    const boxes = html.match(/<input[^>]*>/g) ?? [];
    expect(boxes).toHaveLength(2);
    for (const box of boxes) {
      expect(box).toContain('type="checkbox"');
      expect(box).toContain("disabled");
    }
    expect(boxes[0]).toContain("checked");
    expect(boxes[1]).not.toContain("checked");
  });

  it("renders ~~strikethrough~~ and a bare URL through the link policy", () => {
    const html = render("~~old~~ see https://example.com/x");
    expect(html).toContain("<del>old</del>");
    expect(html).toContain('href="https://example.com/x"');
  });
});

describe("code blocks", () => {
  it("highlights a fence with a known language (keyword, string spans)", () => {
    const html = render('```ts\nconst x: string = "hi";\n```');
    expect(html).toContain('class="language-ts hljs"');
    expect(html).toContain('<span class="hljs-keyword">const</span>');
    expect(html).toContain('<span class="hljs-string">&quot;hi&quot;</span>');
  });

  it("makes a code block reachable by keyboard, so that a long line can be scrolled (axe: scrollable-region-focusable)", () => {
    const html = render("```js\n" + "x".repeat(400) + "\n```");
    expect(html).toMatch(/<pre tabindex="0"><code/);
  });

  it("leaves a fence with an unknown or no language as plain text (no guessing)", () => {
    expect(render("```nosuchlang\nconst x = 1;\n```")).not.toContain("hljs-");
    expect(render("```\nconst x = 1;\n```")).not.toContain("hljs-");
  });

  it("keeps HTML inside code as text", () => {
    const html = render('```html\n<img src="https://evil.example/x.png" onerror="alert(1)">\n```');
    expect(html).not.toMatch(/<img/i);
    expect(html).toContain("&lt;");
  });
});

describe("math", () => {
  it("typesets $x^2$ inline and $$…$$ as a display formula with KaTeX", () => {
    const html = render("Inline $x^2$ here.\n\n$$\n\\frac{a}{b}\n$$");
    expect(html).toContain('class="katex"');
    expect(html).toContain('class="katex-display"');
    expect(html).toContain("<math");
    expect(html).toContain("mfrac");
    expect(html).not.toContain("$x^2$");
  });

  it("keeps HTML inside math as text and refuses KaTeX's link and HTML commands", () => {
    const html = render(
      '$<img src=x onerror="alert(1)">$ and $\\href{javascript:alert(1)}{x}$ and $\\htmlClass{evil}{y}$ and $\\includegraphics{https://evil.example/a.png}$',
    );
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toMatch(/href="javascript/i);
    expect(html).not.toContain('class="enclosing evil"');
    expect(html).not.toContain('evil.example/a.png"');
  });

  it("renders a formula KaTeX cannot parse as its source, without throwing", () => {
    const html = render("$\\frac{a$ and $$\\begin{nosuchenv}x$$");
    expect(html).toContain("katex-error");
  });

  it("survives a formula nested thousands of levels deep (shown, or refused, never a crash)", () => {
    const deep = `$${"{".repeat(3_000)}x${"}".repeat(3_000)}$`;
    const budget = scaledBudget(5_000);
    const start = performance.now();
    const html = render(deep);
    expect(performance.now() - start).toBeLessThan(Math.max(budget, scaledBudget(5_000)));
    expect(html).toMatch(/katex|Shown as plain text/);
  });

  it("shows an answer with more math marks than the limit as plain text", () => {
    const text = "$x$ ".repeat(MARKDOWN_MAX_MATH_MARKS / 2 + 1);
    const verdict = markdownVerdict(text);
    expect(verdict.markdown).toBe(false);
    if (!verdict.markdown) expect(verdict.reason).toContain("math marks");
    expect(render(text)).toContain("Shown as plain text");
  });
});

describe("hostile GFM", () => {
  it("keeps javascript: and data: links in table cells inert", () => {
    const html = render(
      "| a | b |\n| - | - |\n| [x](javascript:alert(1)) | [y](data:text/html,<script>alert(1)</script>) |\n| <script>alert(1)</script> | ![i](https://evil.example/i.png) |",
    );
    expect(html).toContain("<table>");
    expect(html).not.toMatch(/href="(javascript|data):/i);
    expect(html).not.toContain("<script");
    expect(html).not.toMatch(/<img/i);
    expect(html).toContain("Image not loaded");
  });

  it("shows a table past the cell limit as plain text; one just inside renders in bounded time", () => {
    const row = (cols: number) => `|${" x |".repeat(cols)}`;
    const table = (rows: number, cols: number) =>
      [row(cols), `|${" - |".repeat(cols)}`, ...Array.from({ length: rows }, () => row(cols))].join("\n");
    const huge = table(400, 10);
    expect(huge.match(/\|/g)!.length).toBeGreaterThan(MARKDOWN_MAX_TABLE_CELLS);
    expect(render(huge)).toContain("Shown as plain text: it has more than 1,500 table cells");

    const inside = table(120, 10);
    expect(inside.match(/\|/g)!.length).toBeLessThanOrEqual(MARKDOWN_MAX_TABLE_CELLS);
    const budget = scaledBudget(3_000);
    const start = performance.now();
    const html = render(inside);
    // Generous (React's development build), scaled to the machine; the real frame budget is the e2e's.
    expect(performance.now() - start).toBeLessThan(Math.max(budget, scaledBudget(3_000)));
    expect(html.match(/<tr>/g)).toHaveLength(121);
  });

  it("shows an answer with more bare URLs than the limit as plain text (each one a link component)", () => {
    const many = "see http://a.example ".repeat(MARKDOWN_MAX_LINKS + 1);
    expect(render(many)).toContain(`Shown as plain text: it has more than ${MARKDOWN_MAX_LINKS} links`);
    const fits = "see http://a.example ".repeat(MARKDOWN_MAX_LINKS);
    expect(render(fits).match(/<a /g)).toHaveLength(MARKDOWN_MAX_LINKS);
  });

  it("shows a table wider than the row limit as plain text", () => {
    const cols = MARKDOWN_MAX_LINE_CELLS + 1;
    const wide = `${"|a".repeat(cols)}|\n${"|-".repeat(cols)}|\n${"|b".repeat(cols)}|`;
    expect(render(wide)).toContain(
      `Shown as plain text: a table row has more than ${MARKDOWN_MAX_LINE_CELLS} cells`,
    );
    const fits = MARKDOWN_MAX_LINE_CELLS - 1;
    expect(render(`${"|a".repeat(fits)}|\n${"|-".repeat(fits)}|`)).toContain("<table>");
  });
});
