import { describe, expect, it } from "vitest";
import type { GenerationStats } from "../../electron/api";
import { CATALOG_VERSION, type MessageInteraction, type UiDocument } from "../../electron/api/genui";
import type {
  ConversationRepository,
  ImportedMessage,
  NewMessage,
} from "../../electron/core/conversations/conversation-repository";

/** A repository to test, and a way to make a conversation its messages can belong to. */
export interface RepositoryUnderTest {
  repo: ConversationRepository;
  newConversation: () => string;
}

/**
 * The behaviour every ConversationRepository must have (the message tree of migration 0011,
 * imports, GenUI's columns, the reads feedback needs). Run it against each implementation:
 * `conversationRepositoryContract("SQLite", () => ({ repo: new MessageStore(db), newConversation }))`.
 */
export function conversationRepositoryContract(name: string, make: () => RepositoryUnderTest): void {
  describe(`ConversationRepository contract: ${name}`, () => {
    let clock = 1_000;
    const say = (
      repo: ConversationRepository,
      conversationId: string,
      role: NewMessage["role"],
      content: string,
      versionOf?: string,
    ): string =>
      repo.append(
        { conversationId, role, content, status: "complete" },
        clock++,
        versionOf === undefined ? {} : { versionOf },
      ).id;
    /** An empty assistant answer, still streaming, at the end of the conversation. */
    const streaming = (repo: ConversationRepository, conversationId: string): string =>
      repo.append({ conversationId, role: "assistant", content: "", status: "streaming" }, clock++).id;
    const contents = (repo: ConversationRepository, conversationId: string): string[] =>
      repo.list(conversationId).map((m) => m.content);

    it("appends at the end of the shown branch and reads the transcript in order", () => {
      const { repo, newConversation } = make();
      const c = newConversation();
      const other = newConversation();
      const q = say(repo, c, "user", "Q1");
      const a = say(repo, c, "assistant", "A1");
      say(repo, other, "user", "elsewhere");
      expect(contents(repo, c)).toEqual(["Q1", "A1"]);
      expect(repo.get(a)).toMatchObject({ id: a, conversationId: c, role: "assistant", content: "A1" });
      expect(repo.get("missing")).toBeNull();
      expect(repo.countByRole(c, "user")).toBe(1);
      expect(repo.countByRole(c, "system")).toBe(0);
      expect(repo.messageIds(c)).toEqual([q, a]);
      expect(repo.placeOf(a)).toEqual({ conversationId: c, role: "assistant" });
      expect(repo.placeOf("missing")).toBeNull();
    });

    it("keeps versions: a new version is shown in its place, and the old branch comes back as it was", () => {
      const { repo, newConversation } = make();
      const c = newConversation();
      const q1 = say(repo, c, "user", "Q1");
      const a1 = say(repo, c, "assistant", "A1");
      const q2 = say(repo, c, "user", "Q2");
      const edited = say(repo, c, "user", "Q1 edited", q1);
      const b1 = say(repo, c, "assistant", "B1");
      expect(contents(repo, c)).toEqual(["Q1 edited", "B1"]);
      expect(repo.list(c)[0]?.versions).toEqual([q1, edited]);
      expect(repo.list(c)[1]?.versions).toBeUndefined();
      // Every message stays, on whichever branch.
      expect(repo.messageIds(c)).toEqual([q1, a1, q2, edited, b1]);
      expect(repo.showVersion(q1)).toBe(c);
      expect(contents(repo, c)).toEqual(["Q1", "A1", "Q2"]);
      expect(repo.showVersion("missing")).toBeNull();
      // A message's own branch, whichever is shown.
      expect(repo.branchUpTo(b1)).toEqual([
        { role: "user", content: "Q1 edited" },
        { role: "assistant", content: "B1" },
      ]);
      expect(repo.branchUpTo(q2).map((t) => t.content)).toEqual(["Q1", "A1", "Q2"]);
      expect(repo.branchUpTo("missing")).toEqual([]);
      // A version of a message of another conversation is refused, and nothing is written.
      const other = newConversation();
      expect(() => say(repo, other, "user", "stray", q1)).toThrow();
      expect(repo.messageIds(other)).toEqual([]);
    });

    it("saves a streaming answer's text, its end, its context, and interrupts what was left streaming", () => {
      const { repo, newConversation } = make();
      const c = newConversation();
      say(repo, c, "user", "Q");
      const a = streaming(repo, c);
      repo.saveContent(a, "half");
      expect(repo.get(a)).toMatchObject({ content: "half", status: "streaming" });
      const context = { strategy: "sliding-window" as const, includedMessages: 1, droppedMessages: 2 };
      repo.saveContext(a, context);
      expect(repo.get(a)?.context).toEqual(context);
      const stats: GenerationStats = {
        tokens: 3,
        ttftMs: 5,
        durationMs: 9,
        tokensPerSecond: 300,
        contextTokens: 12,
        contextSize: 512,
      };
      expect(repo.finish(a, { content: "whole", status: "stopped", error: null, stats })).toBe(true);
      expect(repo.get(a)).toMatchObject({ content: "whole", status: "stopped", stats });
      expect(repo.finish("missing", { content: "", status: "complete", error: null, stats: null })).toBe(
        false,
      );
      const left = repo.append(
        { conversationId: c, role: "assistant", content: "cut", status: "streaming" },
        clock++,
      );
      expect(repo.markStreamingInterrupted()).toBe(1);
      expect(repo.get(left.id)).toMatchObject({ content: "cut", status: "interrupted" });
    });

    it("keeps an answer whose end could not be written, shows it, and writes it with finish()", () => {
      const { repo, newConversation } = make();
      const c = newConversation();
      say(repo, c, "user", "Q");
      const a = streaming(repo, c);
      const final = { content: "kept", status: "complete" as const, error: null, stats: null };
      repo.keepUnwritten(a, final);
      expect(repo.unwrittenFinals()).toEqual([[a, final]]);
      expect(repo.get(a)).toMatchObject({ content: "kept" });
      expect(repo.finish(a, final)).toBe(true);
      expect(repo.unwrittenFinals()).toEqual([]);
      expect(repo.get(a)).toMatchObject({ content: "kept", status: "complete" });
    });

    it("imports a chain after the shown branch, with every column an export carries", () => {
      const { repo, newConversation } = make();
      const c = newConversation();
      const existing = say(repo, c, "user", "already here");
      const doc: UiDocument = {
        version: CATALOG_VERSION,
        blocks: [{ kind: "text", markdown: "a **UI** answer" }],
      };
      const base: Omit<ImportedMessage, "id" | "role" | "content"> = {
        conversationId: c,
        status: "complete",
        error: null,
        createdAt: 7,
        stats: null,
        context: null,
        format: null,
        ui: null,
        interaction: null,
      };
      const answer = repo.importMessage({
        ...base,
        id: "imported-answer",
        role: "assistant",
        content: "",
        status: "error",
        error: "it failed",
        format: "ui",
        ui: doc,
        context: { strategy: "full", includedMessages: 1, droppedMessages: 0 },
      });
      expect(answer).toBe("imported-answer");
      const interaction: MessageInteraction = {
        messageId: answer,
        componentId: "form",
        componentType: "Form",
        label: "Trip",
        action: "submit",
        values: { city: "Lyon" },
        outcome: "completed",
      };
      const user = repo.importMessage({
        ...base,
        id: "imported-user",
        role: "user",
        content: "Lyon",
        interaction,
      });
      expect(repo.list(c).map((m) => m.id)).toEqual([existing, answer, user]);
      expect(repo.branchUpTo(user).map((t) => t.content)).toEqual(["already here", "", "Lyon"]);
      expect(repo.get(answer)).toMatchObject({
        status: "error",
        error: "it failed",
        createdAt: 7,
        format: "ui",
        ui: doc,
        context: { strategy: "full", includedMessages: 1, droppedMessages: 0 },
      });
      expect(repo.get(user)?.interaction).toEqual(interaction);
      expect(repo.get(user)?.format).toBeUndefined();
      // What follows an import follows its last message.
      const next = say(repo, c, "assistant", "after");
      expect(repo.branchUpTo(next).length).toBe(4);
    });

    it("writes GenUI's columns: a UI answer, its document, an interaction", () => {
      const { repo, newConversation } = make();
      const c = newConversation();
      const a = say(repo, c, "assistant", "");
      expect(repo.get(a)?.format).toBeUndefined();
      repo.markUiAnswer(a);
      expect(repo.get(a)).toMatchObject({ format: "ui", ui: null });
      const doc: UiDocument = { version: CATALOG_VERSION, blocks: [{ kind: "text", markdown: "hi" }] };
      repo.saveUiDocument(a, doc);
      expect(repo.get(a)?.ui).toEqual(doc);
      repo.saveUiDocument(a, null);
      expect(repo.get(a)?.ui).toBeNull();
      const u = say(repo, c, "user", "clicked");
      const interaction: MessageInteraction = {
        messageId: a,
        componentId: "ok",
        componentType: "Button",
        label: "OK",
        action: "click",
        values: {},
        outcome: "completed",
      };
      repo.saveInteraction(u, interaction);
      expect(repo.get(u)?.interaction).toEqual(interaction);
    });

    it("finds no replaced answer where a regeneration replaced none", () => {
      const { repo, newConversation } = make();
      const c = newConversation();
      const a = say(repo, c, "assistant", "A");
      expect(repo.replacedMessage(c, a)).toBeNull();
    });
  });
}
