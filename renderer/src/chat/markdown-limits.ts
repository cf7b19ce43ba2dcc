/**
 * What markdown an answer may ask the parser for. react-markdown (micromark) recurses once per
 * container level (a few hundred `>` or list markers overflow the stack: a white page) and
 * resolves emphasis, links and code spans in time that grows with the square of the delimiters
 * in a block (20,000 `*a` freeze the main thread for minutes). An answer past these limits is
 * shown as plain text with the reason; the limits sit far above what real answers use, and keep
 * the worst answer within the frame budget stated in ARCHITECTURE.md (measured by
 * e2e/hostile-markdown.spec.ts on the generator in renderer/src/testing/hostile-markdown.ts).
 */

/** Longest answer parsed as markdown, in UTF-16 code units (~6k tokens; dense markdown costs ~10 µs a character). */
export const MARKDOWN_MAX_CHARS = 24_000;
/** Deepest container nesting (quotes, list items, indentation levels) on one line. */
export const MARKDOWN_MAX_NESTING = 8;
/** Most containers over all lines (each costs a scan per line: 1,500 list items take ~200 ms). */
export const MARKDOWN_MAX_CONTAINERS = 1_000;
/** Most inline delimiters (`*` `_` `` ` `` `[` `]` `~` `$`) in one block (text between blank lines): cost is quadratic in them. */
export const MARKDOWN_MAX_BLOCK_DELIMITERS = 300;
/** Most inline delimiters in the whole answer. */
export const MARKDOWN_MAX_DELIMITERS = 4_000;
/** Most `$` in the answer: each pair is a formula KaTeX typesets (~0.2–1 ms each). */
export const MARKDOWN_MAX_MATH_MARKS = 400;
/** Most `|` in the answer: each may open a table cell (GFM), a DOM element of its own (1,500: a 450-row table of two columns; a 1,000-row table took ~1 s to lay out in Chromium on a shared core). */
export const MARKDOWN_MAX_TABLE_CELLS = 1_500;
/** Most bare URLs (`http://`, `https://`, `www.`): GFM makes each a link, a component of its own. */
export const MARKDOWN_MAX_LINKS = 300;
/** Most `|` on one line: a table row wider than this is no table a person reads (each cell is a DOM element). */
export const MARKDOWN_MAX_LINE_CELLS = 100;
/** Longest line parsed as markdown (a run with no line break is one block the parser scans whole). */
export const MARKDOWN_MAX_LINE_CHARS = 10_000;

/** How much of an answer shown as plain text is laid out before the user asks for the rest. */
export const PLAIN_PREVIEW_CHARS = 10_000;

export type MarkdownVerdict = { markdown: true } | { markdown: false; reason: string };

const LIST_MARKER = /^(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)/;
const DELIMITER = /[*_`[\]~$]/g;
const MATH_MARK = /\$/g;
const TABLE_CELL = /\|/g;
const BARE_URL = /https?:\/\/|www\./gi;

/** How many containers the start of `line` opens: `>`, list markers, and 2-space indents. */
export function lineNesting(line: string): number {
  let depth = 0;
  let i = 0;
  let spaces = 0;
  while (i < line.length) {
    const ch = line[i]!;
    if (ch === " ") {
      spaces += 1;
      i += 1;
      continue;
    }
    if (ch === "\t") {
      spaces += 4;
      i += 1;
      continue;
    }
    depth += Math.floor(spaces / 2);
    spaces = 0;
    if (ch === ">") {
      depth += 1;
      i += 1;
      continue;
    }
    const marker = LIST_MARKER.exec(line.slice(i, i + 12));
    if (marker) {
      depth += 1;
      i += marker[0].length;
      continue;
    }
    break;
  }
  return depth + Math.floor(spaces / 2);
}

/** Whether `text` is parsed as markdown, or why it is shown as plain text. Linear in the text. */
export function markdownVerdict(text: string): MarkdownVerdict {
  if (text.length > MARKDOWN_MAX_CHARS) {
    return {
      markdown: false,
      reason: `it is longer than ${MARKDOWN_MAX_CHARS.toLocaleString("en")} characters`,
    };
  }
  const mathMarks = text.match(MATH_MARK)?.length ?? 0;
  if (mathMarks > MARKDOWN_MAX_MATH_MARKS) {
    return {
      markdown: false,
      reason: `it has more than ${MARKDOWN_MAX_MATH_MARKS.toLocaleString("en")} math marks ($)`,
    };
  }
  const cells = text.match(TABLE_CELL)?.length ?? 0;
  if (cells > MARKDOWN_MAX_TABLE_CELLS) {
    return {
      markdown: false,
      reason: `it has more than ${MARKDOWN_MAX_TABLE_CELLS.toLocaleString("en")} table cells`,
    };
  }
  const links = text.match(BARE_URL)?.length ?? 0;
  if (links > MARKDOWN_MAX_LINKS) {
    return {
      markdown: false,
      reason: `it has more than ${MARKDOWN_MAX_LINKS.toLocaleString("en")} links`,
    };
  }
  let blockDelimiters = 0;
  let delimiters = 0;
  let containers = 0;
  for (const line of text.split("\n")) {
    if (line.length > MARKDOWN_MAX_LINE_CHARS) {
      return {
        markdown: false,
        reason: `a line is longer than ${MARKDOWN_MAX_LINE_CHARS.toLocaleString("en")} characters`,
      };
    }
    if ((line.match(TABLE_CELL)?.length ?? 0) > MARKDOWN_MAX_LINE_CELLS) {
      return {
        markdown: false,
        reason: `a table row has more than ${MARKDOWN_MAX_LINE_CELLS} cells`,
      };
    }
    if (line.trim() === "") {
      blockDelimiters = 0;
      continue;
    }
    const depth = lineNesting(line);
    if (depth > MARKDOWN_MAX_NESTING) {
      return {
        markdown: false,
        reason: `it nests quotes or lists deeper than ${MARKDOWN_MAX_NESTING} levels`,
      };
    }
    containers += depth;
    if (containers > MARKDOWN_MAX_CONTAINERS) {
      return {
        markdown: false,
        reason: `it has more than ${MARKDOWN_MAX_CONTAINERS.toLocaleString("en")} quote and list levels`,
      };
    }
    const marks = line.match(DELIMITER)?.length ?? 0;
    blockDelimiters += marks;
    delimiters += marks;
    if (delimiters > MARKDOWN_MAX_DELIMITERS) {
      return {
        markdown: false,
        reason: `it has more than ${MARKDOWN_MAX_DELIMITERS.toLocaleString("en")} formatting marks`,
      };
    }
    if (blockDelimiters > MARKDOWN_MAX_BLOCK_DELIMITERS) {
      return {
        markdown: false,
        reason: `a paragraph has more than ${MARKDOWN_MAX_BLOCK_DELIMITERS.toLocaleString("en")} formatting marks`,
      };
    }
  }
  return { markdown: true };
}
