import type { Database } from "better-sqlite3";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FeedbackItem, LIMITS } from "../../../common/feedback-protocol";
import { testDir } from "../../../testing/core/temp-dir";
import { buildItem, UNKNOWN_VERSIONS } from "./feedback-items";
import { BATCH_ENVELOPE_BYTES, SqliteOutbox, nextBatch, retryDelayMs } from "./sqlite-outbox";
import { ConversationSeed, openFeedbackDatabase } from "../../../testing/feedback/feedback-db";

describe("SqliteOutbox", () => {
  let db: Database;
  let outbox: SqliteOutbox;
  let eventId: string;

  beforeEach(() => {
    db = openFeedbackDatabase(join(testDir(), "t.db"));
    outbox = new SqliteOutbox(db);
    const { answerId } = new ConversationSeed(db).turn("q", "a");
    eventId = "e1";
    db.prepare("INSERT INTO feedback_events VALUES ('e1', 'rating', ?, NULL, 1, '{}', '{}')").run(answerId);
  });
  afterEach(() => {
    db.close();
  });

  const item = (key: string, createdAt: number, response?: string): FeedbackItem =>
    buildItem({
      key,
      kind: "rating",
      createdAt,
      consent: response === undefined ? "ratings" : "ratings_and_text",
      target: { versions: UNKNOWN_VERSIONS, domain: "chat" },
      rating: "good",
      text: () => ({ response }),
    });
  const put = (key: string, createdAt: number, response?: string): FeedbackItem => {
    const it = item(key, createdAt, response);
    outbox.enqueue(eventId, it);
    return it;
  };
  const keys = (entries: { key: string }[]): string[] => entries.map((e) => e.key);

  it("peeks oldest first (insertion order within a millisecond) up to maxItems, without removing", () => {
    put("outbox-key-c", 30);
    put("outbox-key-a", 10);
    put("outbox-key-b1", 20);
    put("outbox-key-b2", 20);
    expect(keys(outbox.peekBatch(3, 1e6))).toEqual(["outbox-key-a", "outbox-key-b1", "outbox-key-b2"]);
    expect(outbox.peekBatch(10, 1e6)[0]).toEqual({
      key: "outbox-key-a",
      item: item("outbox-key-a", 10),
      attempts: 0,
      createdAt: 10,
    });
    expect(outbox.count()).toBe(4);
    expect(outbox.peekBatch(0, 1e6)).toEqual([]);
  });

  it("keeps the JSON of the batch's items within maxBytes (UTF-8 bytes)", () => {
    const texts = ["é".repeat(300), "x".repeat(300), "y".repeat(300)];
    texts.forEach((t, i) => put(`outbox-key-${i}`, i, t));
    const all = outbox.peekBatch(10, 1e6);
    const bytes = (n: number): number =>
      Buffer.byteLength(JSON.stringify(all.slice(0, n).map((e) => e.item)));
    expect(keys(outbox.peekBatch(10, bytes(2)))).toEqual(["outbox-key-0", "outbox-key-1"]);
    expect(keys(outbox.peekBatch(10, bytes(2) - 1))).toEqual(["outbox-key-0"]);
    expect(keys(outbox.peekBatch(10, bytes(3)))).toHaveLength(3);
    // An item larger than the cap on its own comes alone rather than blocking the queue.
    expect(keys(outbox.peekBatch(10, 10))).toEqual(["outbox-key-0"]);
  });

  it("markDelivered removes, markRejected moves to the rejected list with the reason", () => {
    put("outbox-key-1", 1);
    put("outbox-key-2", 2);
    put("outbox-key-3", 3);
    outbox.markDelivered(["outbox-key-1", "unknown-key"], 100);
    outbox.markRejected([{ key: "outbox-key-2", reason: "schema: rating missing" }], 200);
    expect(keys(outbox.peekBatch(10, 1e6))).toEqual(["outbox-key-3"]);
    expect(outbox.count()).toBe(1);
    expect(outbox.rejected()).toEqual([
      {
        key: "outbox-key-2",
        item: item("outbox-key-2", 2),
        reason: "schema: rating missing",
        rejectedAt: 200,
      },
    ]);
  });

  it("recordAttempt counts attempts, keeps the last error and schedules the next try", () => {
    put("outbox-key-1", 1);
    put("outbox-key-2", 2);
    expect(outbox.nextAttemptAt()).toBeNull();
    outbox.recordAttempt(["outbox-key-1", "outbox-key-2"], "503 Service Unavailable", 1000);
    outbox.recordAttempt(["outbox-key-1"], "ECONNRESET", 2000);
    expect(outbox.peekBatch(10, 1e6).map((e) => e.attempts)).toEqual([2, 1]);
    expect(
      db.prepare("SELECT last_error FROM feedback_outbox WHERE key = 'outbox-key-1'").pluck().get(),
    ).toBe("ECONNRESET");
    expect(outbox.nextAttemptAt()).toBe(2000 + retryDelayMs(2));
    expect(retryDelayMs(1)).toBe(30_000);
    expect(retryDelayMs(100)).toBe(6 * 3600_000);
  });

  it("purge removes everything queued and says how many", () => {
    put("outbox-key-1", 1);
    put("outbox-key-2", 2);
    expect(outbox.purge()).toBe(2);
    expect(outbox.count()).toBe(0);
    expect(outbox.purge()).toBe(0);
  });

  it("removeText takes the text out of queued items and lowers their consent", () => {
    put("outbox-key-1", 1, "secret answer");
    put("outbox-key-2", 2);
    expect(outbox.removeText()).toBe(1);
    const [first] = outbox.peekBatch(1, 1e6);
    expect(first!.item.consent).toBe("ratings");
    expect(first!.item.response).toBeUndefined();
    expect(JSON.stringify(first!.item)).not.toContain("secret answer");
  });

  it("nextBatch uses the protocol's caps, leaving room for the envelope", () => {
    const calls: [number, number][] = [];
    const spy = { peekBatch: (n: number, b: number) => (calls.push([n, b]), []) } as unknown as SqliteOutbox;
    nextBatch(spy);
    nextBatch(spy, 5);
    nextBatch(spy, 10_000);
    const bytes = LIMITS.maxBatchBytes - BATCH_ENVELOPE_BYTES;
    expect(calls).toEqual([
      [LIMITS.maxItemsPerBatch, bytes],
      [5, bytes],
      [LIMITS.maxItemsPerBatch, bytes],
    ]);
  });
});
