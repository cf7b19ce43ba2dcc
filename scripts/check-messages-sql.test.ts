import { describe, expect, it } from "vitest";
import { ALLOWED, mayUseMessagesSql, messagesSql, REPOSITORY } from "./check-messages-sql.mjs";

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
