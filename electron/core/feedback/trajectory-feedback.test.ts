/**
 * Answers that called tools, as feedback: the trajectory item (steps redacted like any text,
 * outcome counts), the outcome signals on the answer's other items (rating, follow-up), what the
 * "ratings" consent keeps back, and the cloud's checks of the same items. Real SQLite with the
 * app's migrations; steps written through the Agent's ToolStepStore.
 */
import type { Database } from "better-sqlite3";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkBatch, DEFAULT_DOMAINS } from "../../../cloud/ingest";
import { FeedbackItem, PROTOCOL_VERSION } from "../../../common/feedback-protocol";
import { TOOL_RESULT_MAX_CHARS } from "../../api";
import { testDir } from "../../../testing/core/temp-dir";
import { ToolStepStore } from "../tools/tool-step-store";
import { MAX_ITEM_BYTES, type SharingLevel, withoutText } from "./feedback-items";
import { FeedbackService, readsAsCorrection } from "./feedback-service";
import { MessageContext } from "./message-context";
import { SqliteOutbox } from "./sqlite-outbox";
import { ConversationSeed, openFeedbackDatabase } from "../../../testing/feedback/feedback-db";

describe("trajectories as feedback", () => {
  let db: Database;
  let consent: SharingLevel;
  let service: FeedbackService;
  let outbox: SqliteOutbox;
  let seed: ConversationSeed;
  let steps: ToolStepStore;

  beforeEach(() => {
    db = openFeedbackDatabase(join(testDir(), "t.db"));
    consent = "ratings_and_text";
    outbox = new SqliteOutbox(db);
    const context = new MessageContext(db);
    steps = new ToolStepStore(db);
    service = new FeedbackService({
      db,
      outbox,
      versionsFor: (id) => context.versionsFor(id),
      conversationUpTo: (id) => context.conversationUpTo(id),
      stepsFor: (id) => context.stepsFor(id),
      toolsFor: (called) =>
        [...new Set(called.map((s) => s.tool))].map((name) => ({
          name,
          description: `The ${name} tool (mail ops@corp.example for help).`,
          parameters: { type: "object", properties: { query: { type: "string" } } },
        })),
      getConsent: () => consent,
    });
    seed = new ConversationSeed(db);
  });
  afterEach(() => {
    db.close();
  });

  const items = (): FeedbackItem[] => outbox.peekBatch(1000, 1e9).map((e) => FeedbackItem.parse(e.item));

  /** An answer by the Coding adapter that searched (done), then was denied a mail, then failed. */
  function toolAnswer(result = "Found 2 notes; Dana's phone is +1 (415) 555-2671.") {
    const turn = seed.turn("Search my notes for Dana and mail bob@corp.example", "Dana is on the notes.");
    const call = (index: number, tool: string, args: unknown) =>
      steps.create({
        messageId: turn.answerId,
        index,
        server: "notes",
        tool,
        arguments: args,
        state: "pending",
      });
    const search = call(0, "search_notes", { query: "Dana" });
    steps.update(search.id, { state: "done", decision: "once", result, durationMs: 12.5 });
    const mail = call(1, "send_mail", { to: "bob@corp.example" });
    steps.update(mail.id, { state: "denied", decision: "deny", durationMs: null });
    const broken = call(2, "search_notes", { query: 5 });
    steps.update(broken.id, { state: "invalid", error: "query: must be string" });
    return turn;
  }

  it("a done answer becomes an agent-domain trajectory item, redacted, with its outcome counts", () => {
    const { answerId } = toolAnswer();
    expect(service.trajectory(answerId)).toMatchObject({ kind: "trajectory", queued: true });
    const [item] = items();
    expect(item).toMatchObject({
      kind: "trajectory",
      domain: "agent",
      consent: "ratings_and_text",
      toolOutcome: {
        steps: 3,
        done: 1,
        denied: 1,
        errors: 0,
        invalid: 1,
        stopped: 0,
        truncated: 0,
        totalMs: 12.5,
      },
      prompt: [{ role: "user", text: "Search my notes for Dana and mail [EMAIL]" }],
      response: "Dana is on the notes.",
    });
    expect(item!.trajectory!.steps).toEqual([
      {
        index: 0,
        server: "notes",
        tool: "search_notes",
        arguments: { query: "Dana" },
        decision: "once",
        state: "done",
        result: "Found 2 notes; Dana's phone is [PHONE].",
        truncated: false,
        error: null,
        durationMs: 12.5,
      },
      expect.objectContaining({
        tool: "send_mail",
        arguments: { to: "[EMAIL]" },
        decision: "deny",
        state: "denied",
      }),
      expect.objectContaining({ state: "invalid", error: "query: must be string", result: null }),
    ]);
    // The called tools once each, their descriptions redacted too.
    expect(item!.trajectory!.tools.map((t) => t.name)).toEqual(["search_notes", "send_mail"]);
    expect(item!.trajectory!.tools[0]!.description).toBe("The search_notes tool (mail [EMAIL] for help).");
    const raw = db.prepare("SELECT item_json FROM feedback_outbox").pluck().all().join("\n");
    for (const pii of ["bob@corp.example", "555-2671", "ops@corp.example"]) expect(raw).not.toContain(pii);
  });

  it('with the "ratings" consent only the counts leave; lowering consent strips a queued trajectory', () => {
    const { answerId } = toolAnswer();
    service.trajectory(answerId);
    consent = "ratings";
    service.trajectory(answerId);
    const [withText, countsOnly] = items();
    expect(countsOnly).toMatchObject({ kind: "trajectory", consent: "ratings", toolOutcome: { steps: 3 } });
    expect(countsOnly).not.toHaveProperty("trajectory");
    expect(countsOnly).not.toHaveProperty("prompt");
    const stripped = withoutText(withText!);
    expect(stripped).not.toHaveProperty("trajectory");
    expect(stripped.toolOutcome).toEqual(withText!.toolOutcome);
    // The service accepts all three; text under "ratings" is refused.
    const batch = (list: unknown[]) =>
      checkBatch(
        { protocol: PROTOCOL_VERSION, installId: crypto.randomUUID(), batchId: "batch-0001", items: list },
        new Set(DEFAULT_DOMAINS),
      );
    const ok = batch([withText, countsOnly, stripped]);
    expect(ok.ok && ok.items.map((i) => i.ok)).toEqual([true, true, true]);
    const bad = batch([
      { ...countsOnly, trajectory: withText!.trajectory },
      { ...countsOnly, toolOutcome: null },
    ]);
    expect(bad.ok && bad.items).toEqual([
      { ok: false, key: countsOnly!.idempotencyKey, reason: 'text fields present with consent "ratings"' },
      { ok: false, key: countsOnly!.idempotencyKey, reason: "a trajectory item needs toolOutcome" },
    ]);
  });

  it("the answer's rating carries its trajectory; an answer without calls carries none", () => {
    const { answerId } = toolAnswer();
    const plain = seed.turn("Hello", "Hi!");
    service.rate(answerId, "bad", "it mailed without asking");
    service.rate(plain.answerId, "good");
    const [rated, other] = items();
    expect(rated).toMatchObject({
      kind: "rating",
      rating: "bad",
      domain: "agent",
      toolOutcome: { denied: 1 },
    });
    expect(rated!.trajectory!.steps).toHaveLength(3);
    expect(other).toMatchObject({ kind: "rating", domain: "coding" });
    expect(other).not.toHaveProperty("trajectory");
    expect(other).not.toHaveProperty("toolOutcome");
  });

  it("a follow-up says whether it corrects the answer, without its own text", () => {
    const { answerId } = toolAnswer();
    service.followUp(answerId, "No, I meant the other Dana.");
    service.followUp(answerId, "Thanks! Now list my meetings.");
    const [corrected, fine] = items();
    expect(corrected).toMatchObject({ kind: "follow_up", interaction: { corrected: true }, domain: "agent" });
    expect(fine).toMatchObject({ kind: "follow_up", interaction: { corrected: false } });
    expect(JSON.stringify(corrected)).not.toContain("other Dana");
    expect(readsAsCorrection("That's wrong, use the work calendar")).toBe(true);
    expect(readsAsCorrection("Try again with Lisbon")).toBe(true);
    expect(readsAsCorrection("Nothing else, thank you")).toBe(false);
    expect(readsAsCorrection("Now book it")).toBe(false);
  });

  it("a huge tool result is cut to fit one item and marked truncated", () => {
    const { answerId } = toolAnswer("x".repeat(TOOL_RESULT_MAX_CHARS));
    const [first] = steps.forMessage(answerId);
    // A result longer than the app's own cut (as an import could carry) is cut again.
    steps.update(first!.id, { result: "y".repeat(TOOL_RESULT_MAX_CHARS * 40) });
    service.trajectory(answerId);
    const [item] = items();
    expect(Buffer.byteLength(JSON.stringify(item))).toBeLessThanOrEqual(MAX_ITEM_BYTES);
    const step = item!.trajectory!.steps[0]!;
    expect(step.result!.length).toBeLessThanOrEqual(TOOL_RESULT_MAX_CHARS);
    expect(step.truncated).toBe(true);
  });

  it("tools whose schemas are huge keep only their names", () => {
    const { answerId } = toolAnswer();
    const context = new MessageContext(db);
    const huge = new FeedbackService({
      db,
      outbox,
      versionsFor: (id) => context.versionsFor(id),
      conversationUpTo: (id) => context.conversationUpTo(id),
      stepsFor: (id) => context.stepsFor(id),
      toolsFor: () => [
        {
          name: "search_notes",
          server: "notes",
          tool: "search_notes",
          description: "d".repeat(9000),
          parameters: {
            type: "object",
            properties: Object.fromEntries(
              Array.from({ length: 150 }, (_, i) => [
                `p${i}`,
                { type: "string", description: "p".repeat(9000) },
              ]),
            ),
          },
        },
      ],
      getConsent: () => consent,
    });
    huge.trajectory(answerId);
    const [item] = items();
    expect(Buffer.byteLength(JSON.stringify(item))).toBeLessThanOrEqual(MAX_ITEM_BYTES);
    expect(item!.trajectory!.tools).toEqual([
      { name: "search_notes", server: "notes", tool: "search_notes" },
    ]);
    expect(item!.trajectory!.steps).toHaveLength(3);
  });

  it("huge arguments are replaced by a marker so the item still fits", () => {
    const { answerId } = toolAnswer();
    const [first] = steps.forMessage(answerId);
    const big = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`k${i}`, "z".repeat(9000)]));
    db.prepare("UPDATE tool_steps SET arguments_json = ? WHERE id = ?").run(JSON.stringify(big), first!.id);
    service.trajectory(answerId);
    const [item] = items();
    expect(Buffer.byteLength(JSON.stringify(item))).toBeLessThanOrEqual(MAX_ITEM_BYTES);
    expect(item!.trajectory!.steps[0]!.arguments).toBe("[TRUNCATED]");
    expect(item!.trajectory!.steps[1]!.arguments).toEqual({ to: "[EMAIL]" });
  });
});
