import type { Database, Statement } from "better-sqlite3";
import { randomUUID } from "node:crypto";
import { ApiError, type Memory } from "../../api";
import type { RouterRecord } from "../chat/turn-store";
import type { MemoryStore } from "../memory/memory-store";
import { cleanMemoryText, memoryKey } from "../memory/memory-text";
import type { ConversationRepository, ImportedMessage } from "./conversation-repository";
import type { ConversationSettingsStore } from "./conversation-settings";
import type { ConversationStore } from "./conversation-store";
import {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  type ExportDocument,
  type ExportedConversation,
  type ExportedMessage,
  type ExportedMemory,
  LIMITS,
  parseExport,
} from "./export-format";
import { ToolStepStore } from "../tools/tool-step-store";

/**
 * The GenUI columns of an imported message (migration 0007). A UI answer keeps its validated
 * document; an interaction points at the imported answer it used (dropped if that is not in
 * the file, before this message).
 */
function importedGenui(
  m: ExportedMessage,
  messageIds: ReadonlyMap<string, string>,
): Pick<ImportedMessage, "format" | "ui" | "interaction"> {
  const isUi = m.role === "assistant" && m.format === "ui";
  const target = m.interaction ? messageIds.get(m.interaction.messageId) : undefined;
  return {
    format: isUi ? "ui" : null,
    ui: isUi && m.ui ? m.ui : null,
    interaction:
      m.interaction && target && m.role === "user" ? { ...m.interaction, messageId: target } : null,
  };
}

/** Harness version of turn records made by an import (they were not generated here). */
export const IMPORTED_HARNESS = "imported";

export interface ImportCounts {
  conversations: number;
  messages: number;
  memories: number;
}

function slug(text: string): string {
  const s = text
    .normalize("NFKD")
    .replace(/[^A-Za-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .toLowerCase()
    .slice(0, 40);
  return s || "conversation";
}

/**
 * Export conversations (with their messages, routing, stats and statuses) and memories as one
 * JSON document, and import such a document: validated whole first, then written in one
 * transaction with new ids, so that an import never overwrites or mixes with existing data.
 */
export class ConversationTransfer {
  private readonly insertConversation: Statement<[string, string, number, number, string]>;
  private readonly insertTurn: Statement<[string, string, string, string, string | null, number]>;
  private readonly insertMemory: Statement<Record<string, unknown>>;
  private readonly linkMemory: Statement<[string, string]>;
  private readonly steps: ToolStepStore;

  constructor(
    private readonly db: Database,
    private readonly stores: {
      conversations: ConversationStore;
      messages: ConversationRepository;
      memories: MemoryStore;
      /** Conversation settings go with their conversation, both ways. */
      settings?: ConversationSettingsStore;
    },
  ) {
    this.insertConversation = db.prepare(
      "INSERT INTO conversations (id, title, created_at, updated_at, adapters_json) VALUES (?, ?, ?, ?, ?)",
    );
    this.insertTurn = db.prepare(`
      INSERT INTO turns (message_id, model_sha256, harness_version, adapters_json, router_json, sampling_json,
        system_prompt, kv_policy, created_at)
      VALUES (?, NULL, '${IMPORTED_HARNESS}', ?, ?, ?, ?, 'reevaluate', ?)`);
    this.insertMemory = db.prepare(`
      INSERT INTO memories (id, text, source, status, conversation_id, message_id, created_at, updated_at)
      VALUES (@id, @text, @source, @status, @conversationId, @messageId, @createdAt, @updatedAt)`);
    this.steps = new ToolStepStore(db);
    this.linkMemory = db.prepare(
      "INSERT OR IGNORE INTO message_memories (message_id, memory_id) VALUES (?, ?)",
    );
  }

  /**
   * One conversation (with the memories that came from it or that its answers used), or
   * everything. Throws not_found for an unknown id.
   */
  export(id?: string, now = Date.now()): { fileName: string; json: string } {
    const { conversations, messages, memories } = this.stores;
    let list;
    if (id) {
      const one = conversations.get(id);
      if (!one)
        throw new ApiError("not_found", "This conversation does not exist (it may have been deleted).");
      list = [one];
    } else {
      list = conversations.list();
    }
    const settings = this.stores.settings;
    const exported = list.map((c) => ({
      ...c,
      ...(settings ? { settings: settings.get(c.id) } : {}),
      messages: messages.list(c.id),
    }));
    let memoryList: Memory[] = memories.list();
    if (id) {
      const related = new Set(memories.idsFromConversation(id));
      for (const m of exported[0]!.messages) for (const used of m.memoriesUsed) related.add(used.id);
      memoryList = memoryList.filter((m) => related.has(m.id));
    }
    const doc = {
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      exportedAt: now,
      conversations: exported,
      memories: memoryList,
    };
    const date = new Date(now).toISOString().slice(0, 10);
    const fileName = id ? `macaron-${slug(list[0]!.title)}-${date}.json` : `macaron-export-${date}.json`;
    return { fileName, json: JSON.stringify(doc, null, 2) };
  }

  /**
   * Validate `json` (see parseExport), then write it all in one transaction with new ids.
   * Returns what was added and the new conversations' ids.
   */
  import(json: string): ImportCounts & { conversationIds: string[] } {
    const doc = parseExport(json);
    return this.db.transaction(() => this.write(doc))();
  }

  private write(doc: ExportDocument): ImportCounts & { conversationIds: string[] } {
    const counts = { conversations: 0, messages: 0, memories: 0, conversationIds: [] as string[] };
    const conversationIds = new Map<string, string>();
    const messageIds = new Map<string, string>();
    for (const c of doc.conversations) {
      counts.messages += this.writeConversation(c, conversationIds, messageIds);
      counts.conversations++;
    }
    const memoryIds = this.writeMemories(doc.memories, conversationIds, messageIds, counts);
    for (const c of doc.conversations) {
      for (const m of c.messages) {
        for (const used of m.memoriesUsed) {
          const memoryId = memoryIds.get(used.id);
          if (memoryId) this.linkMemory.run(messageIds.get(m.id)!, memoryId);
        }
      }
    }
    counts.conversationIds = [...conversationIds.values()];
    return counts;
  }

  private writeConversation(
    c: ExportedConversation,
    conversationIds: Map<string, string>,
    messageIds: Map<string, string>,
  ): number {
    const id = randomUUID();
    conversationIds.set(c.id, id);
    this.insertConversation.run(
      id,
      c.title.trim() || "Imported chat",
      c.createdAt,
      c.updatedAt,
      JSON.stringify(c.adapters),
    );
    if (c.settings && this.stores.settings) this.stores.settings.set(id, c.settings);
    // An export holds the shown branch: imported, it is a chain (migration 0011's tree), each
    // message after the one before.
    for (const m of c.messages) {
      const messageId = randomUUID();
      messageIds.set(m.id, messageId);
      this.stores.messages.importMessage({
        id: messageId,
        conversationId: id,
        role: m.role,
        content: m.content,
        // Nothing is generating it here: it was cut off wherever it came from.
        status: m.status === "streaming" ? "interrupted" : m.status,
        error: m.error,
        createdAt: m.createdAt,
        stats: m.stats,
        context: m.context,
        ...importedGenui(m, messageIds),
      });
      if (m.role === "assistant" && m.steps.length > 0) {
        // In their order, numbered 0, 1, … whatever the file says (indexes are unique per answer).
        const ordered = [...m.steps].sort((a, b) => a.index - b.index);
        this.steps.importSteps(
          messageId,
          ordered.map(({ id: _id, messageId: _messageId, ...step }, index) => ({ ...step, index })),
        );
      }
      if (m.routing) {
        const router: RouterRecord = {
          mode: m.routing.mode,
          confidence: m.routing.confidence,
          reason: m.routing.reason,
          latencyMs: m.routing.latencyMs,
          scores: {},
          skipped: [],
        };
        this.insertTurn.run(
          messageId,
          JSON.stringify(m.routing.adapters),
          JSON.stringify(router),
          // What the answer was generated with, as the file says ('{}': not known).
          JSON.stringify(m.generation?.sampling ?? {}),
          m.generation?.systemPrompt ?? null,
          m.createdAt,
        );
      }
    }
    return c.messages.length;
  }

  /** New memories, except those already known here (same text): imported links point at those. */
  private writeMemories(
    list: readonly ExportedMemory[],
    conversationIds: Map<string, string>,
    messageIds: Map<string, string>,
    counts: ImportCounts,
  ): Map<string, string> {
    const known = new Map(this.stores.memories.list().map((m) => [memoryKey(m.text), m.id]));
    const ids = new Map<string, string>();
    for (const m of list) {
      // The same rules as memories typed here: one line, no control characters.
      const text = cleanMemoryText(m.text, LIMITS.memoryChars);
      if (!text) continue;
      const key = memoryKey(text);
      const existing = known.get(key);
      if (existing) {
        ids.set(m.id, existing);
        continue;
      }
      const id = randomUUID();
      this.insertMemory.run({
        id,
        text,
        source: m.source,
        status: m.status,
        conversationId: (m.conversationId && conversationIds.get(m.conversationId)) ?? null,
        messageId: (m.messageId && messageIds.get(m.messageId)) ?? null,
        createdAt: m.createdAt,
        updatedAt: m.updatedAt,
      });
      ids.set(m.id, id);
      known.set(key, id);
      counts.memories++;
    }
    return ids;
  }
}
