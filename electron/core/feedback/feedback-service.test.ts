import type { Database } from "better-sqlite3";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FeedbackItem } from "../../../common/feedback-protocol";
import { ConversationStore } from "../conversations/conversation-store";
import { testDir } from "../../../testing/core/temp-dir";
import { FeedbackService } from "./feedback-service";
import type { SharingLevel } from "./feedback-items";
import { MessageContext } from "./message-context";
import { SqliteOutbox } from "./sqlite-outbox";
import { ConversationSeed, openFeedbackDatabase } from "../../../testing/feedback/feedback-db";

const PII_ANSWER = "Sure! Write to alice.smith@example.com or call +1 (415) 555-2671.";

describe("FeedbackService", () => {
  let db: Database;
  let consent: SharingLevel;
  let clock: number;
  let service: FeedbackService;
  let outbox: SqliteOutbox;
  let seed: ConversationSeed;

  beforeEach(() => {
    db = openFeedbackDatabase(join(testDir(), "t.db"));
    consent = "ratings_and_text";
    clock = 1_000;
    outbox = new SqliteOutbox(db);
    const context = new MessageContext(db, () => "catalog-7");
    service = new FeedbackService({
      db,
      outbox,
      versionsFor: (id) => context.versionsFor(id),
      conversationUpTo: (id) => context.conversationUpTo(id),
      getConsent: () => consent,
      now: () => clock++,
    });
    seed = new ConversationSeed(db);
  });
  afterEach(() => {
    service.close();
    db.close();
  });

  const count = (table: string): number =>
    db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
  const items = (): FeedbackItem[] => outbox.peekBatch(1000, 1e9).map((e) => FeedbackItem.parse(e.item));

  it("says how the answer ended (the turn's stop reason): a cut answer is known to the service", () => {
    const { answerId } = seed.turn("Explain tides.", "Tides are caused by the");
    service.rate(answerId, "good");
    const timings = (stopReason: string) => JSON.stringify({ promptTokensEvaluated: 3, stopReason });
    db.prepare("UPDATE turns SET timings_json = ? WHERE message_id = ?").run(timings("maxTokens"), answerId);
    service.rate(answerId, "good");
    db.prepare("UPDATE turns SET timings_json = ? WHERE message_id = ?").run(timings("eos"), answerId);
    service.rate(answerId, "good");
    expect(items().map((i) => i.stopReason ?? null)).toEqual([null, "maxTokens", "eos"]);
  });

  it("marks the harness version of an answer made under the conversation's own system prompt", () => {
    const { answerId } = seed.turn("Capital of France?", "Paris.");
    service.rate(answerId, "good");
    db.prepare("UPDATE turns SET system_prompt = 'Answer like a pirate.' WHERE message_id = ?").run(answerId);
    service.rate(answerId, "bad");
    const [first, second] = items();
    expect(first!.versions.harnessVersion).toBe("0.1.0+h1");
    expect(second!.versions.harnessVersion).toBe("0.1.0+h1+custom-system");
  });

  it("writes the event and the redacted item together, with the answer's versions", () => {
    const { answerId } = seed.turn("How do I reach support? I'm bob@corp.example", PII_ANSWER);
    const record = service.rate(answerId, "bad", "It leaked my mail bob@corp.example");
    expect(record).toMatchObject({ kind: "rating", messageId: answerId, queued: true });
    expect(count("feedback_events")).toBe(1);
    const [item] = items();
    expect(item).toMatchObject({
      kind: "rating",
      rating: "bad",
      consent: "ratings_and_text",
      domain: "coding",
      versions: {
        modelSha256: "abc123",
        harnessVersion: "0.1.0+h1",
        adapters: [{ id: "coding", version: "1.2.0", scale: 1 }],
        router: { mode: "auto", confidence: 0.8, reason: "auto: coding (0.80)" },
        catalogVersion: "catalog-7",
      },
      prompt: [{ role: "user", text: "How do I reach support? I'm [EMAIL]" }],
      response: "Sure! Write to [EMAIL] or call [PHONE].",
      reason: "It leaked my mail [EMAIL]",
    });
    // Nothing personal anywhere in the outbox; the local event keeps the original.
    const raw = db.prepare("SELECT item_json FROM feedback_outbox").pluck().all().join("\n");
    for (const pii of ["alice.smith@example.com", "555-2671", "bob@corp.example"])
      expect(raw).not.toContain(pii);
    expect(service.eventsFor(answerId)[0]!.payload).toEqual({
      rating: "bad",
      reason: "It leaked my mail bob@corp.example",
    });
  });

  it("a failure inside the transaction leaves neither the event nor the item", () => {
    const { answerId } = seed.turn("q", "a");
    db.exec(
      "CREATE TRIGGER outbox_full BEFORE INSERT ON feedback_outbox BEGIN SELECT RAISE(ABORT, 'disk full'); END",
    );
    expect(() => service.rate(answerId, "good")).toThrow(/disk full/);
    expect(count("feedback_events")).toBe(0);
    expect(count("feedback_outbox")).toBe(0);
  });

  it("consent off: events are stored, nothing is queued", () => {
    consent = "off";
    const { answerId } = seed.turn("q", PII_ANSWER);
    expect(service.rate(answerId, "good").queued).toBe(false);
    service.copied(answerId);
    service.correct(answerId, "better");
    expect(count("feedback_events")).toBe(3);
    expect(outbox.count()).toBe(0);
    expect(service.ratingFor(answerId)).toBe("good");
  });

  it("ratings only: items carry the signal and versions but no text at all", () => {
    consent = "ratings";
    const { answerId } = seed.turn("my secret question", PII_ANSWER);
    service.rate(answerId, "good", "nice answer");
    service.correct(answerId, "corrected text");
    const newId = seed.regenerate(answerId, "second answer");
    service.regenerated(answerId, newId);
    service.copied(newId);
    service.routerOverride(newId, ["coding"], "chat");
    service.genuiInteraction(newId, {
      componentId: "form-1",
      action: "submit",
      values: { name: "Alice" },
      outcome: "completed",
    });
    const queued = items();
    expect(queued.map((i) => i.kind)).toEqual([
      "rating",
      "correction",
      "regeneration",
      "copy",
      "router_override",
      "genui",
    ]);
    for (const i of queued) {
      expect(i.consent).toBe("ratings");
      for (const field of ["prompt", "response", "correction", "chosen", "rejected", "reason"] as const)
        expect(i[field] ?? null).toBeNull();
    }
    const json = JSON.stringify(queued);
    for (const text of [
      "secret question",
      "Sure!",
      "nice answer",
      "corrected text",
      "second answer",
      "Alice",
    ])
      expect(json).not.toContain(text);
    expect(queued[4]!.interaction).toEqual({ from: ["coding"], chosen: "chat" });
    expect(queued[5]!.interaction).toEqual({ componentId: "form-1", action: "submit", outcome: "completed" });
  });

  it("text consent: corrections, preference pairs and form values are included, redacted", () => {
    const { answerId } = seed.turn(
      "Fix my config",
      "Use host 203.0.113.7 and key sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv",
    );
    service.correct(answerId, "Use host 203.0.113.8 instead, mail ops@example.org");
    const newId = seed.regenerate(answerId, "Use the host from your .env file.");
    service.regenerated(answerId, newId);
    service.genuiInteraction(newId, {
      componentId: "contact",
      action: "submit",
      values: { email: "eve@example.net", note: "hi" },
      outcome: "completed",
    });
    const [correction, pair, genui] = items();
    expect(correction).toMatchObject({
      response: "Use host [IP] and key [SECRET]",
      correction: "Use host [IP] instead, mail [EMAIL]",
    });
    expect(pair).toMatchObject({
      kind: "regeneration",
      prompt: [{ role: "user", text: "Fix my config" }],
      chosen: "Use the host from your .env file.",
      rejected: "Use host [IP] and key [SECRET]",
    });
    expect(pair!.interaction).toMatchObject({ rejectedVersions: { harnessVersion: "0.1.0+h1" } });
    expect(genui!.interaction).toEqual({
      componentId: "contact",
      action: "submit",
      outcome: "completed",
      values: { email: "[EMAIL]", note: "hi" },
    });
    // Every item has its own stable idempotency key.
    const keys = items().map((i) => i.idempotencyKey);
    expect(new Set(keys).size).toBe(3);
    expect(outbox.peekBatch(10, 1e9).map((e) => e.key)).toEqual(keys);
  });

  it("ratingFor returns the latest rating", () => {
    const { answerId } = seed.turn("q", "a");
    expect(service.ratingFor(answerId)).toBeNull();
    service.rate(answerId, "good");
    service.rate(answerId, "bad");
    expect(service.ratingFor(answerId)).toBe("bad");
  });

  it("deleting the conversation deletes its events and their queued items", () => {
    const { answerId } = seed.turn("q", PII_ANSWER);
    service.rate(answerId, "good");
    service.copied(answerId);
    const other = new ConversationSeed(db).turn("q2", "a2");
    service.rate(other.answerId, "bad");
    expect(new ConversationStore(db).delete(seed.conversationId)).toBe(true);
    expect(count("feedback_events")).toBe(1);
    expect(items().map((i) => i.rating)).toEqual(["bad"]);
  });

  it("refuses unknown messages, user messages and bad input with clear errors, and records nothing", () => {
    const { userId, answerId } = seed.turn("q", "a");
    expect(() => service.rate("no-such-message", "good")).toThrow(/does not exist/);
    expect(() => service.rate(userId, "good")).toThrow(/about an answer/);
    expect(() => service.rate(answerId, "meh" as "good")).toThrow(/"good" or "bad"/);
    expect(() => service.correct(answerId, "  ")).toThrow(/correction/);
    expect(() => service.routerOverride(answerId, ["x"], "")).toThrow(/toAdapterId/);
    expect(() =>
      service.genuiInteraction(answerId, { componentId: "c", action: "a", outcome: "gone" as "completed" }),
    ).toThrow(/outcome/);
    const other = new ConversationSeed(db).turn("q", "b");
    expect(() => service.regenerated(answerId, other.answerId)).toThrow(/same conversation/);
    expect(count("feedback_events")).toBe(0);
  });

  it("an answer without a turn record still gets a valid item (unknown versions)", () => {
    seed.message("user", "q");
    const answerId = seed.message("assistant", "a");
    service.rate(answerId, "good");
    expect(items()[0]!.versions).toEqual({
      modelSha256: null,
      harnessVersion: "unknown",
      adapters: [],
      router: null,
      catalogVersion: null,
    });
  });

  it("fits huge text within the item cap by dropping the oldest turns first", () => {
    for (let i = 0; i < 30; i++)
      seed.message(i % 2 ? "assistant" : "user", `turn ${i} ` + "x".repeat(20_000));
    seed.message("user", "last question");
    const answerId = seed.message("assistant", "final answer");
    service.rate(answerId, "good");
    const [item] = items();
    expect(Buffer.byteLength(JSON.stringify(item))).toBeLessThanOrEqual(256 * 1024);
    expect(item!.prompt!.at(-1)).toEqual({ role: "user", text: "last question" });
    expect(item!.prompt!.length).toBeLessThan(31);
    expect(item!.response).toBe("final answer");
  });
});
