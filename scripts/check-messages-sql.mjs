// `npm run lint`'s fourth part: SQL on the `messages` table runs in one place, the conversation
// repository (electron/core/conversations/message-store.ts, see ARCHITECTURE.md "Conversations:
// where they are stored"). A file runs SQL on it when it names the table (quoted or not, in any
// case, with or without a schema such as main; messages_fts and other names that only start with
// it are other tables) where SQLite takes a table: after FROM, JOIN, INTO, UPDATE [OR …], TABLE
// [IF [NOT] EXISTS], INDEX/TRIGGER … ON, ANALYZE or REINDEX, in a FROM clause's comma list, in a
// PRAGMA's argument. Upper-case keywords count anywhere (this code base writes SQL so, and prose
// rarely does); keywords in lower case (any one case) count inside a string literal that starts
// like SQL (a statement or a clause: select, delete, from, join, where, …; a template's `${…}`
// is skipped), so prose — "read from messages" in a comment, "Delete from messages" in the
// UI — is not SQL. Allowed besides the repository: the migrations (the schema's history), tests,
// test support, benchmarks and e2e (they set up and inspect databases), and the files in ALLOWED
// with the reason they stay.
// Arguments: the files to check (default: every tracked source file).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

export const REPOSITORY = "electron/core/conversations/message-store.ts";

/** Product files that keep SQL on messages, with the reason. */
export const ALLOWED = new Map([
  [REPOSITORY, "the conversation repository"],
  [
    "electron/core/conversations/conversation-search.ts",
    "the search index's read: FTS5 ranks and cuts its hits before they are joined to messages by rowid",
  ],
]);

const TEST_SIDE = /(^|\/)(testing|bench|e2e)\/|\.(test|spec)\.[cm]?[jt]sx?$|\.d\.[cm]?ts$/;
const MIGRATIONS = /^electron\/core\/db\/migrations\//;
const SOURCE = /\.[cm]?[jt]sx?$/;

/** `messages` in any case (SQLite's names are case-insensitive), not a longer name. */
const TABLE = "[mM][eE][sS][sS][aA][gG][eE][sS](?![\\w$])";
/**
 * A table reference to messages: quoted or not, with or without a schema (`main.messages`, or a
 * template's `${schema}.messages`). A quote may have a space beside it: an escaped quote in a
 * string literal (`\"main\"`) reads as a space and the quote (see stringLiterals).
 */
const REF = `(?:["'\`[]? ?[\\w$]* ?["'\`\\]]?\\s*\\.\\s*)?["'\`[]? ?${TABLE}`;
/** Any table reference (for the comma list of a FROM clause). */
const ANY_REF = `(?:["'\`[]?[\\w$]+["'\`\\]]?\\s*\\.\\s*)?["'\`[]?[\\w$]+["'\`\\]]?`;

/** Where SQLite takes a table name, written in upper-case keywords; `i` makes them any case. */
const SQL_ON_MESSAGES = [
  `\\b(?:FROM|JOIN|INTO|ANALYZE|REINDEX)\\s+${REF}`,
  `\\bUPDATE\\s+(?:OR\\s+(?:ROLLBACK|ABORT|REPLACE|FAIL|IGNORE)\\s+)?${REF}`,
  `\\bTABLE\\s+(?:IF\\s+(?:NOT\\s+)?EXISTS\\s+)?${REF}`,
  `\\b(?:INDEX|TRIGGER)\\b[^;]{0,300}?\\bON\\s+${REF}`,
  `\\bFROM\\s+(?:${ANY_REF}(?:\\s+(?:AS\\s+)?[\\w$]+)?\\s*,\\s*)+${REF}`,
  `\\bPRAGMA\\s+(?:[\\w$]+\\.)?[\\w$]+\\s*\\(\\s*${REF}`,
].join("|");

/** How a string literal that holds SQL starts: a statement or a clause, all in one case. */
const SQL_START =
  /^[\s(]*(select|insert|update|delete|replace|with|create|drop|alter|pragma|from|join|left|inner|cross|natural|where|union)\b/i;

/**
 * The string literals of JavaScript/TypeScript source: each one's offset and its text, as long as
 * the source it came from (escapes and a template's `${…}` become spaces, so an offset in the
 * text is an offset in the source). Comments and regular expression literals are skipped.
 */
export function stringLiterals(src) {
  const literals = [];
  let i = 0;
  const escaped = (c) => ("\"'`".includes(c) ? ` ${c}` : c === "\n" ? " \n" : "  ");
  const quoted = (q) => {
    const start = ++i;
    let text = "";
    while (i < src.length && src[i] !== q && src[i] !== "\n") {
      if (src[i] === "\\") {
        text += escaped(src[i + 1] ?? "");
        i += 2;
      } else text += src[i++];
    }
    literals.push({ start, text: text.slice(0, i - start) });
    i++;
  };
  const template = () => {
    const start = ++i;
    let text = "";
    while (i < src.length && src[i] !== "`") {
      if (src[i] === "\\") {
        text += escaped(src[i + 1] ?? "");
        i += 2;
      } else if (src[i] === "$" && src[i + 1] === "{") {
        const from = i;
        i += 2;
        code(true);
        text += src.slice(from, i).replace(/[^\n]/g, " ");
      } else text += src[i++];
    }
    literals.push({ start, text: text.slice(0, i - start) });
    i++;
  };
  const regex = () => {
    let inClass = false;
    for (i++; i < src.length && src[i] !== "\n"; i++) {
      if (src[i] === "\\") i++;
      else if (src[i] === "[") inClass = true;
      else if (src[i] === "]") inClass = false;
      else if (src[i] === "/" && !inClass) break;
    }
    i++;
  };
  // A `/` starts a regular expression after an operator, an opening bracket or a keyword.
  const regexMayStart = (prev, word) =>
    prev === "" ||
    "(,=:[!&|?{};+-*%<>~^".includes(prev) ||
    /^(return|typeof|case|in|of|void|yield|await|delete|throw)$/.test(word);
  function code(untilBrace) {
    let depth = 0;
    let prev = "";
    let word = "";
    while (i < src.length) {
      const c = src[i];
      if (c === "/" && src[i + 1] === "/") {
        const end = src.indexOf("\n", i);
        i = end < 0 ? src.length : end;
      } else if (c === "/" && src[i + 1] === "*") {
        const end = src.indexOf("*/", i + 2);
        i = end < 0 ? src.length : end + 2;
      } else if (c === '"' || c === "'") {
        quoted(c);
        prev = c;
      } else if (c === "`") {
        template();
        prev = c;
      } else if (c === "/" && regexMayStart(prev, word)) {
        regex();
        prev = "/";
      } else {
        i++;
        if (c === "{") depth++;
        else if (c === "}" && depth-- === 0 && untilBrace) return;
        if (/[\w$]/.test(c)) word = /[\w$]/.test(prev) ? word + c : c;
        if (!/\s/.test(c)) prev = c;
      }
    }
  }
  code(false);
  return literals;
}

/** The SQL on messages in a file's text: each hit's 1-based line and the matched words. */
export function messagesSql(text) {
  const hits = new Map();
  const add = (index, match) => {
    if (!hits.has(index)) hits.set(index, match.replace(/\s+/g, " "));
  };
  for (const m of text.matchAll(new RegExp(SQL_ON_MESSAGES, "g"))) add(m.index, m[0]);
  for (const literal of stringLiterals(text)) {
    const first = SQL_START.exec(literal.text)?.[1];
    if (first === undefined || (first !== first.toLowerCase() && first !== first.toUpperCase())) continue;
    for (const m of literal.text.matchAll(new RegExp(SQL_ON_MESSAGES, "gi")))
      add(literal.start + m.index, m[0]);
  }
  return [...hits]
    .sort(([a], [b]) => a - b)
    .map(([index, match]) => ({ line: text.slice(0, index).split("\n").length, match }));
}

/** Whether `path` (relative to the repository root, with slashes) may run SQL on messages. */
export function mayUseMessagesSql(path) {
  return ALLOWED.has(path) || MIGRATIONS.test(path) || TEST_SIDE.test(path) || !SOURCE.test(path);
}

function main() {
  const files =
    process.argv.slice(2).length > 0
      ? process.argv.slice(2)
      : execFileSync("git", ["ls-files"], { encoding: "utf8" }).split("\n").filter(Boolean);
  const found = [];
  for (const file of files) {
    if (mayUseMessagesSql(file)) continue;
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue; // Deleted in the work tree.
    }
    for (const hit of messagesSql(text)) found.push(`${file}:${hit.line}: ${hit.match}`);
  }
  for (const line of found) process.stderr.write(`${line}\n`);
  if (found.length > 0) {
    process.stderr.write(
      `${found.length} SQL statement(s) on messages outside ${REPOSITORY}: add an operation to the ConversationRepository and call it.\n`,
    );
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
