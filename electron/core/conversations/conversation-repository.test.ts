import type { Database } from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { conversationRepositoryContract } from "../../../testing/contracts/conversation-repository.contract";
import { openDatabase } from "../db/database";
import { ConversationStore } from "./conversation-store";
import { MessageStore } from "./message-store";

const opened: Database[] = [];
afterAll(() => {
  for (const db of opened) db.close();
});

function fresh(): { db: Database; repo: MessageStore; newConversation: () => string } {
  const db = openDatabase(":memory:");
  opened.push(db);
  const conversations = new ConversationStore(db);
  return { db, repo: new MessageStore(db), newConversation: () => conversations.create(undefined).id };
}

conversationRepositoryContract("SQLite (MessageStore)", fresh);

describe("MessageStore as the SQLite ConversationRepository", () => {
  it("finds the answer a version-3 regeneration replaced (replaced_by, no longer written)", () => {
    const { db, repo, newConversation } = fresh();
    const c = newConversation();
    const old = repo.append({ conversationId: c, role: "assistant", content: "old", status: "complete" }).id;
    const replacement = repo.append({
      conversationId: c,
      role: "assistant",
      content: "new",
      status: "complete",
    }).id;
    // Test set-up only: rows from before migration 0011 carry replaced_by.
    db.prepare("UPDATE messages SET replaced_by = ? WHERE id = ?").run(replacement, old);
    expect(repo.replacedMessage(c, replacement)).toBe(old);
    expect(repo.replacedMessage(newConversation(), replacement)).toBeNull();
  });

  it("imports inside the caller's transaction: a failed import leaves nothing", () => {
    const { db, repo, newConversation } = fresh();
    const c = newConversation();
    expect(() =>
      db.transaction(() => {
        repo.importMessage({
          id: "m1",
          conversationId: c,
          role: "user",
          content: "hi",
          status: "complete",
          error: null,
          createdAt: 1,
          stats: null,
          context: null,
          format: null,
          ui: null,
          interaction: null,
        });
        throw new Error("later part of the import failed");
      })(),
    ).toThrow("later part");
    expect(repo.messageIds(c)).toEqual([]);
  });
});
