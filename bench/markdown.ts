/**
 * `npm run bench -- markdown`: what react-markdown costs on the hostile generator's answers
 * (renderer/src/testing/hostile-markdown.ts), with and without the limits of
 * renderer/src/chat/markdown-limits.ts. Node, React's server renderer (parse + render to
 * HTML, no layout): the per-answer work the parse queue gives one task each in the app.
 * - hostile answers at 2,000 characters a run, unlimited: time or the error (stack overflow);
 * - the same at 20,000, limited: the linear pre-pass's time and its verdict;
 * - the answers just inside the limits: parse + render time (the slowest the UI ever parses).
 */
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import ReactMarkdown from "react-markdown";
import { markdownVerdict } from "../renderer/src/chat/markdown-limits";
import { edgeMarkdown, hostileMarkdown } from "../renderer/src/testing/hostile-markdown";
import { type BenchRow, report } from "./stats";

function parse(text: string): { ms: number; error: string | null } {
  const start = performance.now();
  try {
    renderToStaticMarkup(createElement(ReactMarkdown, null, text));
    return { ms: performance.now() - start, error: null };
  } catch (e) {
    return { ms: performance.now() - start, error: e instanceof Error ? e.message : String(e) };
  }
}

export async function benchMarkdown(): Promise<void> {
  parse("# warm *up* [x](http://a) `c`\n\n- a\n- b\n\n> q");
  const rows: BenchRow[] = [];
  const limited = new Map(hostileMarkdown(20_000).map((c) => [c.name, c.text]));
  for (const c of hostileMarkdown(2_000)) {
    const unlimited = parse(c.text);
    const text = limited.get(c.name) ?? "";
    const start = performance.now();
    const verdict = markdownVerdict(text);
    const checkMs = performance.now() - start;
    rows.push({
      name: c.name,
      "unlimited chars": c.text.length,
      "unlimited ms": unlimited.ms,
      "unlimited error": unlimited.error,
      "limited chars": text.length,
      "pre-pass ms": checkMs,
      verdict: verdict.markdown ? "markdown" : "plain",
    });
  }
  for (const c of edgeMarkdown()) {
    const parsed = parse(c.text);
    rows.push({
      name: c.name,
      "limited chars": c.text.length,
      "parse+render ms": parsed.ms,
      verdict: markdownVerdict(c.text).markdown ? "markdown" : "plain",
    });
  }
  await Promise.resolve();
  report("markdown", rows, { nodeEnv: process.env.NODE_ENV ?? "development" });
}
