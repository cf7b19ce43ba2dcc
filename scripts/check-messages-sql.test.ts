import { describe, expect, it } from "vitest";
import {
  ALLOWED,
  mayUseMessagesSql,
  messagesSql,
  REPOSITORY,
  stringLiterals,
} from "./check-messages-sql.mjs";

describe("check-messages-sql", () => {
  it("finds SQL on the messages table, over line breaks and quotes, with its line", () => {
    const text = [
      'db.prepare("SELECT conversation_id, role FROM messages WHERE id = ?");',
      "const sql = `",
      "  INSERT INTO",
      "    messages (id) VALUES (?)`;",
      "UPDATE \"messages\" SET format = 'ui'",
      "SELECT s.* FROM tool_steps s JOIN messages m ON m.id = s.message_id",
      "DELETE FROM `messages`",
    ].join("\n");
    expect(messagesSql(text)).toEqual([
      { line: 1, match: "FROM messages" },
      { line: 3, match: "INTO messages" },
      { line: 5, match: 'UPDATE "messages' },
      { line: 6, match: "JOIN messages" },
      { line: 7, match: "FROM `messages" },
    ]);
  });

  it("leaves other tables, prose and variables alone", () => {
    const text = [
      "SELECT * FROM messages_fts WHERE messages_fts MATCH ?",
      "INSERT INTO message_memories (message_id, memory_id) VALUES (?, ?)",
      "// the answer is read from messages the user wrote",
      "const rows = messages.list(id); for (const m of messages) join(m);",
      "SELECT * FROM messagesArchive",
    ].join("\n");
    expect(messagesSql(text)).toEqual([]);
  });

  it("finds SQLite's other ways to name the table, and SQL in lower case inside string literals", () => {
    const lines = [
      'db.prepare("delete from messages where id = ?");',
      'db.prepare("UPDATE OR IGNORE messages SET chosen = 1");',
      'db.prepare("SELECT c.id FROM conversations c, messages m WHERE m.conversation_id = c.id");',
      'db.prepare("SELECT * FROM main.messages");',
      "db.prepare('INSERT OR REPLACE INTO messages (id) VALUES (?)');",
      'db.prepare("select t.id from turns t join messages m on m.id = t.message_id");',
      'db.prepare("insert or replace into \\"main\\".\\"messages\\" (id) values (?)");',
      "db.exec(`update or ignore messages set shown = 0`);",
      "db.prepare(`select ${columns} from [Messages] where id = ?`);",
      'db.prepare("select id, role " + "from conversations AS c, temp.messages");',
      'db.prepare("select *\\nfrom MESSAGES");',
      'db.exec("DROP TABLE IF EXISTS messages; CREATE INDEX messages_seq ON messages(seq)");',
      'db.pragma("table_info(messages)"); db.exec("PRAGMA main.table_info(messages)");',
      "const q = sql`select id from ${db}.messages`;",
    ];
    expect(messagesSql(lines.join("\n"))).toEqual([
      { line: 1, match: "from messages" },
      { line: 2, match: "UPDATE OR IGNORE messages" },
      { line: 3, match: "FROM conversations c, messages" },
      { line: 4, match: "FROM main.messages" },
      { line: 5, match: "INTO messages" },
      { line: 6, match: "join messages" },
      { line: 7, match: 'into "main ". "messages' }, // escapes read as spaces
      { line: 8, match: "update or ignore messages" },
      { line: 9, match: "from [Messages" },
      { line: 10, match: "from conversations AS c, temp.messages" },
      { line: 11, match: "from MESSAGES" },
      { line: 12, match: "TABLE IF EXISTS messages" },
      { line: 12, match: "INDEX messages_seq ON messages" },
      { line: 13, match: "PRAGMA main.table_info(messages" },
      { line: 14, match: "from .messages" }, // ${db} reads as spaces
    ]);
  });

  it("takes prose in comments and UI strings, in any case, for prose", () => {
    const text = [
      "// delete from messages the ones the user removed; join messages into one",
      "/* update messages, then select from messages */",
      't("Delete from messages"); t("Select text from messages to quote it");',
      'const hint = "You can delete from messages you sent, or join messages together";',
      "const help = `Copy text from messages: select it, then press ${key}.`;",
      "<p>Don't delete from messages</p>",
      'const n = 3; const label = `${n} messages`; const r = /from messages\\/"/g; x = a / b; y = "ok";',
      "const from = messages; update(messages); join(messages, ', ');",
    ].join("\n");
    expect(messagesSql(text)).toEqual([]);
  });

  it("reads string literals past comments, regular expressions and nested templates", () => {
    const src = [
      "const a = 'one'; // 'not a string'",
      '/* "nor this" */ const b = /["\'`]/g.test(x) ? "two" : `three ${f(`four`)} five`;',
      'const c = a / 2 / 3; const d = "six\\"s";',
    ].join("\n");
    const texts = stringLiterals(src).map((l) => {
      expect(l.text.length).toBeLessThanOrEqual(src.length - l.start);
      return l.text;
    });
    expect(texts).toEqual(["one", "two", "four", "three              five", 'six "s']);
  });

  it("allows the repository, the search index's read, migrations and test-side code only", () => {
    expect(ALLOWED.has(REPOSITORY)).toBe(true);
    for (const path of [
      REPOSITORY,
      "electron/core/conversations/conversation-search.ts",
      "electron/core/db/migrations/0011-message-tree.ts",
      "electron/core/feedback/feedback-service.test.ts",
      "testing/feedback/feedback-db.ts",
      "bench/search.ts",
      "e2e/chat.spec.ts",
      "ARCHITECTURE.md",
    ]) {
      expect(mayUseMessagesSql(path), path).toBe(true);
    }
    for (const path of [
      "electron/core/feedback/feedback-sharing.ts",
      "electron/core/genui/genui-store.ts",
      "electron/server/openai/routes.ts",
      "cloud/store/sqlite-store.ts",
      "scripts/cycle/cycle.ts",
    ]) {
      expect(mayUseMessagesSql(path), path).toBe(false);
    }
  });
});
