import type { Database } from "better-sqlite3";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { testDir } from "../../../testing/core/temp-dir";
import { FeedbackService } from "./feedback-service";
import { MessageContext } from "./message-context";
import { PrivacySettingsService } from "./privacy-settings";
import { SqliteOutbox, nextBatch } from "./sqlite-outbox";
import { ConversationSeed, openFeedbackDatabase } from "../../../testing/feedback/feedback-db";

describe("PrivacySettingsService", () => {
  let path: string;
  let db: Database;
  let outbox: SqliteOutbox;
  let privacy: PrivacySettingsService;
  let feedback: FeedbackService;
  let answerId: string;

  const open = (): void => {
    db = openFeedbackDatabase(path);
    outbox = new SqliteOutbox(db);
    privacy = new PrivacySettingsService({ db, outbox, now: () => 5_000 });
    const context = new MessageContext(db);
    feedback = new FeedbackService({
      db,
      outbox,
      versionsFor: (id) => context.versionsFor(id),
      conversationUpTo: (id) => context.conversationUpTo(id),
      getConsent: () => privacy.consent(),
    });
  };

  beforeEach(() => {
    path = join(testDir(), "t.db");
    open();
    answerId = new ConversationSeed(db).turn("question with a@b.io", "the answer").answerId;
  });
  afterEach(() => {
    db.close();
  });

  it("starts with sharing off and a random install id that persists", () => {
    const first = privacy.get();
    expect(first).toMatchObject({ sharing: "off", consentedAt: null, endpoint: null });
    expect(first.installId).toMatch(/^[0-9a-f-]{36}$/);
    db.close();
    open();
    expect(privacy.get().installId).toBe(first.installId);
  });

  it("records when consent was given and what was chosen", () => {
    const { settings, purged } = privacy.update({
      sharing: "ratings_and_text",
      endpoint: "https://feedback.example.com/",
    });
    expect(settings).toMatchObject({
      sharing: "ratings_and_text",
      consentedAt: 5_000,
      endpoint: "https://feedback.example.com",
    });
    expect(purged).toBe(0);
    expect(privacy.consent()).toBe("ratings_and_text");
  });

  it("turning sharing off purges the queue in the same transaction and reports the count", () => {
    privacy.update({ sharing: "ratings_and_text" });
    feedback.rate(answerId, "good");
    feedback.copied(answerId);
    expect(privacy.update({ sharing: "off" })).toMatchObject({
      purged: 2,
      settings: { sharing: "off", consentedAt: null },
    });
    expect(outbox.count()).toBe(0);
    // Later signals stay local; the events recorded before are kept.
    expect(feedback.rate(answerId, "bad").queued).toBe(false);
    expect(outbox.count()).toBe(0);
    expect(feedback.eventsFor(answerId)).toHaveLength(3);
  });

  it("a failed purge leaves the consent unchanged", () => {
    privacy.update({ sharing: "ratings" });
    feedback.rate(answerId, "good");
    db.exec("CREATE TRIGGER keep BEFORE DELETE ON feedback_outbox BEGIN SELECT RAISE(ABORT, 'locked'); END");
    expect(() => privacy.update({ sharing: "off" })).toThrow(/locked/);
    expect(privacy.consent()).toBe("ratings");
    expect(outbox.count()).toBe(1);
  });

  it("lowering to ratings removes the text from queued items", () => {
    privacy.update({ sharing: "ratings_and_text" });
    feedback.rate(answerId, "good", "because");
    expect(privacy.preview()[0]!.response).toBe("the answer");
    expect(privacy.update({ sharing: "ratings" }).stripped).toBe(1);
    const [item] = privacy.preview();
    expect(item).toMatchObject({ consent: "ratings", rating: "good" });
    expect(JSON.stringify(item)).not.toMatch(/the answer|because|question/);
  });

  it("preview is exactly the next batch the sync would send, redacted", () => {
    privacy.update({ sharing: "ratings_and_text" });
    for (let i = 0; i < 5; i++) feedback.rate(answerId, i % 2 ? "good" : "bad");
    const next = nextBatch(outbox).map((e) => e.item);
    expect(privacy.preview()).toEqual(next);
    expect(privacy.preview(2)).toEqual(next.slice(0, 2));
    expect(JSON.stringify(next)).toContain("question with [EMAIL]");
    expect(JSON.stringify(next)).not.toContain("a@b.io");
    outbox.markDelivered([next[0]!.idempotencyKey], 1);
    expect(privacy.preview()).toEqual(next.slice(1));
  });

  it("refuses bad input with a clear message", () => {
    expect(() => privacy.update({ sharing: "everything" as "off" })).toThrow(/Invalid privacy settings/);
    expect(() => privacy.update({ endpoint: "not a url" })).toThrow(/not a URL/);
    expect(() => privacy.update({ endpoint: "http://feedback.example.com" })).toThrow(/https/);
    expect(privacy.update({ endpoint: "http://127.0.0.1:8787" }).settings.endpoint).toBe(
      "http://127.0.0.1:8787",
    );
    expect(privacy.update({ endpoint: null }).settings.endpoint).toBeNull();
  });
});
