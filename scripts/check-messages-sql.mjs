// `npm run lint`'s fourth part: SQL on the `messages` table runs in one place, the conversation
// repository (electron/core/conversations/message-store.ts, see ARCHITECTURE.md "Conversations:
// where they are stored"). A file runs SQL on it when its text has one of the keywords FROM,
// INTO, UPDATE, JOIN or TABLE (upper case, as this code base writes SQL, so that prose saying
// "read from messages" is not SQL) followed by the table's name, quoted or not (messages_fts and
// other names that only start with it are other tables). Allowed besides the repository: the
// migrations (the schema's history), tests, test support, benchmarks and e2e (they set up and
// inspect databases), and the files in ALLOWED with the reason they stay.
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

/** The SQL on messages in a file's text: each hit's 1-based line and the matched words. */
export function messagesSql(text) {
  const hits = [];
  for (const m of text.matchAll(/\b(FROM|INTO|UPDATE|JOIN|TABLE)\s+["'`[]?messages(?![\w$])/g)) {
    hits.push({ line: text.slice(0, m.index).split("\n").length, match: m[0].replace(/\s+/g, " ") });
  }
  return hits;
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
