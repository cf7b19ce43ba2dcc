/**
 * Opt-in feedback through core's API against the REAL reference service on 127.0.0.1:
 * consent, redaction before queuing, upload, revocation, deletion, and the implicit signals
 * of the chat (regenerations, router overrides). Real SQLite files, scripted engine. Every
 * request that reaches the service is counted at the service itself.
 */
import { createServer, type AddressInfo, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createCloudApp } from "../../../cloud/server";
import type { Conversation, ConversationDetail, Message, PrivacyState, SyncStatus } from "../../api";
import { assembleCore, type Core, type CoreParts } from "../index";
import { EventRecorder } from "../../../testing/core/events";
import { FakeEngine } from "../../../testing/engine/fake-engine";
import { testDir } from "../../../testing/core/temp-dir";
import { DEFAULT_FEEDBACK_ENDPOINT } from "./feedback-endpoint";
import { value } from "../../../testing/core/result-value";

const ctx = { transport: "ipc" } as const;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const newDir = (): string => testDir("macaron-feedback-");

/** The reference service, with a counter of every request it receives. */
async function startService() {
  const { app, store } = createCloudApp({ dataDir: join(newDir(), "cloud"), adminKey: "admin-key-1234" });
  const requests: string[] = [];
  app.addHook("onRequest", (req, _reply, done) => {
    requests.push(`${req.method} ${req.url}`);
    done();
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const { port } = app.server.address() as AddressInfo;
  cleanups.push(() => app.close());
  const stored = (installId: string) =>
    store
      .itemsForDomain("coding")
      .concat(store.itemsForDomain("chat"), store.itemsForDomain("agent"), store.itemsForDomain("ui"))
      .filter((i) => i.installId === installId)
      .map((i) => JSON.parse(i.json) as Record<string, unknown>);
  return { url: `http://127.0.0.1:${port}`, requests, store, stored };
}

/** The URL of a port nothing listens on (just released by the OS). */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;
  await new Promise((ok) => server.close(ok));
  return `http://127.0.0.1:${port}`;
}

/** A port that accepts connections and never answers (a stalled service). */
async function startBlackHole() {
  const sockets: Socket[] = [];
  let connected: () => void = () => undefined;
  const firstConnection = new Promise<void>((ok) => (connected = ok));
  const server = createServer((socket) => {
    sockets.push(socket);
    connected();
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  cleanups.push(
    () =>
      new Promise<void>((ok) => {
        for (const s of sockets) s.destroy();
        server.close(() => ok());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, firstConnection, connections: () => sockets.length };
}

async function start(parts: Partial<CoreParts> = {}, dataDir = newDir()) {
  const engine = new FakeEngine();
  const logs: string[] = [];
  const core: Core = await assembleCore(
    // A long debounce: tests upload with privacy.syncNow unless they test the debounce.
    {
      dataDir,
      log: (m) => logs.push(m),
      feedbackTiming: { debounceMs: 60_000, statusThrottleMs: 0 },
      ...parts,
    },
    () => engine,
  );
  cleanups.push(() => core.close());
  const events = new EventRecorder((l) => core.subscribe(l));
  const call = async <T>(method: string, input: unknown = {}): Promise<T> =>
    value<T>(await core.dispatch(method, input, ctx));
  await call("models.openDemo");
  const conv = await call<Conversation>("conversations.create");
  const send = async (text: string, tokens?: string[]): Promise<Message> => {
    if (tokens) engine.scripts.push({ tokens });
    const done = events.next("chat.done", (d) => d.conversationId === conv.id);
    await call("chat.send", { conversationId: conv.id, text, adapters: { pinned: "coding" } });
    return (await done).message;
  };
  const regenerate = async (adapters?: unknown, tokens?: string[]): Promise<Message> => {
    if (tokens) engine.scripts.push({ tokens });
    const done = events.next("chat.done", (d) => d.conversationId === conv.id);
    await call("chat.regenerate", { conversationId: conv.id, ...(adapters ? { adapters } : {}) });
    const message = (await done).message;
    // The preference pair is recorded on the macrotask after chat.done.
    await new Promise((r) => setImmediate(r));
    return message;
  };
  const transcript = async () =>
    (await call<ConversationDetail>("conversations.get", { id: conv.id })).messages;
  return { core, engine, events, call, conv, send, regenerate, transcript, dataDir, logs };
}

async function failure(core: Core, method: string, input: unknown = {}) {
  const result = await core.dispatch(method, input, ctx);
  if (result.ok) throw new Error(`${method} should have failed`);
  return result.error;
}

type Preview = { items: Record<string, unknown>[]; bytes: number };
const TEXT_FIELDS = ["prompt", "response", "correction", "chosen", "rejected", "reason"];

describe("feedback through core (real service)", () => {
  it("sends nothing by default: ratings, corrections, copies and regenerations stay local", async () => {
    const cloud = await startService();
    const s = await start({ feedbackEndpoint: cloud.url });
    const privacy = await s.call<PrivacyState>("privacy.get");
    expect(privacy).toMatchObject({ sharing: "off", consentedAt: null, endpoint: cloud.url });
    expect(privacy.sync).toMatchObject({ state: "disabled", queued: 0, rejected: [] });

    const answer = await s.send("Fix my loop");
    const rated = await s.call<Message>("feedback.rate", { messageId: answer.id, rating: "good" });
    expect(rated).toMatchObject({ id: answer.id, rating: "good", corrected: false });
    const corrected = await s.call<Message>("feedback.correct", {
      messageId: answer.id,
      text: "Better answer",
    });
    expect(corrected).toMatchObject({
      rating: "good",
      corrected: true,
      correction: "Better answer",
      content: answer.content,
    });
    // A second correction replaces the first; the export carries it for the reader.
    await s.call("feedback.correct", { messageId: answer.id, text: "Best **answer**" });
    const exported = await s.call<{ json: string }>("conversations.export", { id: s.conv.id });
    const exportedAnswer = (
      JSON.parse(exported.json) as { conversations: { messages: { id: string; correction?: string }[] }[] }
    ).conversations[0]!.messages.find((m) => m.id === answer.id);
    expect(exportedAnswer?.correction).toBe("Best **answer**");
    expect(await s.call("feedback.copied", { messageId: answer.id })).toEqual({ recorded: true });
    await s.call("feedback.rate", { messageId: answer.id, rating: "bad", reason: "wrong" });
    // The transcript shows the latest rating and keeps the generated text.
    expect((await s.transcript()).at(-1)).toMatchObject({
      id: answer.id,
      rating: "bad",
      corrected: true,
      correction: "Best **answer**",
      content: answer.content,
    });
    expect((await s.transcript()).at(0)).toMatchObject({
      role: "user",
      rating: null,
      corrected: false,
      correction: null,
    });

    const again = await s.regenerate({ pinned: "chat" });
    expect(again.status).toBe("complete");
    expect(await s.call<Preview>("privacy.preview")).toEqual({ items: [], bytes: 2 });
    expect(await s.call<SyncStatus>("privacy.syncNow")).toMatchObject({ state: "disabled", queued: 0 });
    expect(cloud.requests).toEqual([]);
  });

  it('with consent "ratings" uploads the rating without any text', async () => {
    const cloud = await startService();
    const s = await start({ feedbackEndpoint: cloud.url });
    const updated = await s.call<{ privacy: PrivacyState; purged: number }>("privacy.update", {
      sharing: "ratings",
    });
    expect(updated.purged).toBe(0);
    expect(updated.privacy).toMatchObject({ sharing: "ratings", endpoint: cloud.url });
    expect(updated.privacy.consentedAt).toEqual(expect.any(Number));

    const answer = await s.send("Fix my loop, mail me at jane.doe@example.com");
    await s.call("feedback.rate", {
      messageId: answer.id,
      rating: "good",
      reason: "nice, jane.doe@example.com",
    });
    const preview = await s.call<Preview>("privacy.preview");
    expect(preview.items).toHaveLength(1);
    expect(preview.bytes).toBe(Buffer.byteLength(JSON.stringify(preview.items)));
    for (const f of TEXT_FIELDS) expect(preview.items[0]?.[f] ?? null).toBeNull();

    const status = await s.call<SyncStatus>("privacy.syncNow");
    expect(status).toMatchObject({ state: "idle", queued: 0, lastError: null });
    expect(status.lastSyncAt).toEqual(expect.any(Number));
    const [item, ...rest] = cloud.stored(updated.privacy.installId);
    expect(rest).toEqual([]);
    expect(item).toMatchObject({ kind: "rating", rating: "good", consent: "ratings", domain: "coding" });
    for (const f of TEXT_FIELDS) expect(item?.[f] ?? null).toBeNull();
    expect(JSON.stringify(item)).not.toContain("jane");
    expect(s.events.of("privacy.sync").at(-1)).toMatchObject({ state: "idle", queued: 0 });
  });

  it('with consent "ratings_and_text" redacts the answer before queuing', async () => {
    const cloud = await startService();
    const s = await start({ feedbackEndpoint: cloud.url });
    const { privacy } = await s.call<{ privacy: PrivacyState }>("privacy.update", {
      sharing: "ratings_and_text",
    });
    const answer = await s.send("Who do I write to?", ["Write to ", "jane.doe@example.com", " today."]);
    expect(answer.content).toBe("Write to jane.doe@example.com today.");
    await s.call("feedback.rate", { messageId: answer.id, rating: "bad" });

    const preview = await s.call<Preview>("privacy.preview");
    const json = JSON.stringify(preview.items);
    expect(json).toContain("Write to [EMAIL] today.");
    expect(json).not.toContain("jane.doe@example.com");
    expect(preview.items[0]).toMatchObject({
      kind: "rating",
      consent: "ratings_and_text",
      response: "Write to [EMAIL] today.",
    });

    await s.call("privacy.syncNow");
    const stored = cloud.stored(privacy.installId);
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain("jane.doe@example.com");
  });

  it("revoking consent empties the queue and nothing is sent afterwards", async () => {
    const cloud = await startService();
    const s = await start({ feedbackEndpoint: cloud.url });
    await s.call("privacy.update", { sharing: "ratings_and_text" });
    const answer = await s.send("Hello");
    await s.call("feedback.rate", { messageId: answer.id, rating: "good" });
    await s.call("feedback.copied", { messageId: answer.id });
    expect((await s.call<PrivacyState>("privacy.get")).sync.queued).toBe(2);

    const off = await s.call<{ privacy: PrivacyState; purged: number }>("privacy.update", { sharing: "off" });
    expect(off.purged).toBe(2);
    expect(off.privacy).toMatchObject({
      sharing: "off",
      consentedAt: null,
      sync: { state: "disabled", queued: 0 },
    });
    await s.call("feedback.rate", { messageId: answer.id, rating: "bad" });
    expect(await s.call<Preview>("privacy.preview")).toEqual({ items: [], bytes: 2 });
    expect(await s.call<SyncStatus>("privacy.syncNow")).toMatchObject({ state: "disabled", queued: 0 });
    expect(cloud.requests).toEqual([]);
  });

  it("revoking consent aborts an upload in flight before it answers", async () => {
    const hole = await startBlackHole();
    const s = await start({ feedbackEndpoint: hole.url });
    await s.call("privacy.update", { sharing: "ratings" });
    const answer = await s.send("Hello");
    await s.call("feedback.rate", { messageId: answer.id, rating: "good" });
    const pending = s.core.dispatch("privacy.syncNow", {}, ctx);
    await hole.firstConnection; // the upload's first request is in flight, never to be answered
    const off = await s.call<{ purged: number }>("privacy.update", { sharing: "off" });
    expect(off.purged).toBe(1);
    // The stalled request was aborted (not left to its 30 s timeout): syncNow answered at once.
    expect(value<SyncStatus>(await pending)).toMatchObject({ state: "disabled", queued: 0 });
    expect(hole.connections()).toBe(1);
  });

  it("deletes the uploaded data at the service, and says so clearly when it cannot", async () => {
    const cloud = await startService();
    // The endpoint from the Privacy setting this time (no environment endpoint).
    const s = await start({});
    const { privacy } = await s.call<{ privacy: PrivacyState }>("privacy.update", {
      sharing: "ratings",
      endpoint: cloud.url,
    });
    expect(privacy.endpoint).toBe(cloud.url);
    const answer = await s.send("Hello");
    await s.call("feedback.rate", { messageId: answer.id, rating: "good" });
    await s.call("feedback.copied", { messageId: answer.id });
    await s.call("privacy.syncNow");
    expect(cloud.store.countItems(privacy.installId)).toBe(2);

    // Works with sharing off: revoking is when people ask.
    await s.call("privacy.update", { sharing: "off" });
    expect(await s.call("privacy.deleteUploaded")).toEqual({ deletedItems: 2 });
    expect(cloud.store.countItems(privacy.installId)).toBe(0);

    // Pointed at a service that is not running: a clear error, nothing pretends to succeed.
    await s.call("privacy.update", { endpoint: await closedPort() });
    const error = await failure(s.core, "privacy.deleteUploaded");
    expect(error.message).toMatch(/could not be reached or refused: .*ECONNREFUSED.*Nothing was deleted/);
  });

  it("switching endpoints away and back: the service refuses the id without its token, and uploads go on under a new id", async () => {
    const a = await startService();
    const b = await startService();
    const s = await start({});
    const first = (
      await s.call<{ privacy: PrivacyState }>("privacy.update", { sharing: "ratings", endpoint: a.url })
    ).privacy;
    const rate = async () => {
      const answer = await s.send("Hello");
      await s.call("feedback.rate", { messageId: answer.id, rating: "good" });
      return s.call<SyncStatus>("privacy.syncNow");
    };
    expect(await rate()).toMatchObject({ state: "idle", queued: 0 });
    await s.call("privacy.update", { endpoint: b.url });
    expect(await rate()).toMatchObject({ state: "idle", queued: 0 });
    expect(b.store.countItems(first.installId)).toBe(1);
    // Back to A: the app kept only B's token, and A answers 409 to the id alone.
    await s.call("privacy.update", { endpoint: a.url });
    expect(await rate()).toMatchObject({ state: "idle", queued: 0, lastError: null });
    const now = await s.call<PrivacyState>("privacy.get");
    expect(now.installId).not.toBe(first.installId);
    expect(now.sharing).toBe("ratings");
    expect(a.store.countItems(first.installId)).toBe(1);
    expect(a.store.countItems(now.installId)).toBe(1);
    expect(a.requests.filter((r) => r === "POST /v1/installs")).toHaveLength(3);
  });

  it("turns a completed regeneration into a preference pair and pins into router overrides", async () => {
    const cloud = await startService();
    const s = await start({ feedbackEndpoint: cloud.url });
    const { privacy } = await s.call<{ privacy: PrivacyState }>("privacy.update", {
      sharing: "ratings_and_text",
    });
    const first = await s.send("Plan my trip", ["First ", "answer"]);
    const second = await s.regenerate({ pinned: "agent" }, ["Second ", "answer"]);
    expect(second.content).toBe("Second answer");

    const items = (await s.call<Preview>("privacy.preview")).items;
    expect(items.map((i) => i.kind).sort()).toEqual(["regeneration", "router_override"]);
    expect(items.find((i) => i.kind === "router_override")).toMatchObject({
      interaction: { from: ["coding"], chosen: "agent" },
      response: "First answer",
    });
    expect(items.find((i) => i.kind === "regeneration")).toMatchObject({
      chosen: "Second answer",
      rejected: "First answer",
      domain: "agent",
    });

    // Pinning another adapter after the answer: an override of that (latest) answer.
    await s.call("conversations.setAdapters", { id: s.conv.id, adapters: { pinned: "ui" } });
    // Pinning the adapter that answered already teaches nothing.
    await s.call("conversations.setAdapters", { id: s.conv.id, adapters: { pinned: "agent" } });
    const overrides = (await s.call<Preview>("privacy.preview")).items.filter(
      (i) => i.kind === "router_override",
    );
    expect(overrides.map((i) => i.interaction)).toEqual([
      { from: ["coding"], chosen: "agent" },
      { from: ["agent"], chosen: "ui" },
    ]);

    expect(await s.call<SyncStatus>("privacy.syncNow")).toMatchObject({ state: "idle", queued: 0 });
    expect(
      cloud
        .stored(privacy.installId)
        .map((i) => i.kind)
        .sort(),
    ).toEqual(["regeneration", "router_override", "router_override"]);
    expect(first.id).not.toBe(second.id);
    expect(s.logs.filter((m) => /feedback/.test(m))).toEqual([]);
  });

  it("a stopped regeneration is no preference", async () => {
    const cloud = await startService();
    const s = await start({ feedbackEndpoint: cloud.url });
    await s.call("privacy.update", { sharing: "ratings" });
    await s.send("Hello");
    s.engine.scripts.push({ tokens: ["par"], end: "hang" });
    const done = s.events.next("chat.done", (d) => d.conversationId === s.conv.id);
    const streaming = s.events.next("chat.delta");
    await s.call("chat.regenerate", { conversationId: s.conv.id });
    await streaming;
    await s.call("chat.stop", { conversationId: s.conv.id });
    expect((await done).message.status).toBe("stopped");
    await new Promise((r) => setImmediate(r));
    expect((await s.call<Preview>("privacy.preview")).items).toEqual([]);
  });

  it("uploads on its own: shortly after new feedback, and at start-up when items wait", async () => {
    const cloud = await startService();
    const dataDir = newDir();
    // No endpoint at first: consent on, items queue, nothing can go anywhere.
    const s = await start({}, dataDir);
    const { privacy } = await s.call<{ privacy: PrivacyState }>("privacy.update", { sharing: "ratings" });
    expect(privacy.endpoint).toBe(DEFAULT_FEEDBACK_ENDPOINT);
    const answer = await s.send("Hello");
    await s.call("feedback.rate", { messageId: answer.id, rating: "good" });
    const stuck = await s.call<SyncStatus>("privacy.syncNow");
    expect(stuck).toMatchObject({ state: "offline", queued: 1 });
    expect(stuck.lastError).toMatch(/No feedback endpoint is set.*MACARON_FEEDBACK_ENDPOINT/);
    expect((await failure(s.core, "privacy.deleteUploaded")).code).toBe("invalid_input");
    await s.core.close();

    // Restart with the endpoint: the waiting item goes at start-up.
    const t = await start(
      { feedbackEndpoint: cloud.url, feedbackTiming: { debounceMs: 10, statusThrottleMs: 0 } },
      dataDir,
    );
    const ready = (st: SyncStatus) => st.state === "idle" && st.queued === 0 && st.lastSyncAt !== null;
    if (!ready((await t.call<PrivacyState>("privacy.get")).sync)) await t.events.next("privacy.sync", ready);
    expect(cloud.store.countItems(privacy.installId)).toBe(1);

    // New feedback goes after the debounce, without syncNow.
    const uploaded = t.events.next("privacy.sync", (st) => st.state === "idle" && st.queued === 0);
    await t.call("feedback.copied", { messageId: answer.id });
    await uploaded;
    expect(cloud.store.countItems(privacy.installId)).toBe(2);
  });

  it("refuses bad input with clear errors", async () => {
    const s = await start({ feedbackEndpoint: "http://127.0.0.1:9" });
    const answer = await s.send("Hello");
    const user = (await s.transcript())[0]!;
    expect(await failure(s.core, "feedback.rate", { messageId: user.id, rating: "good" })).toMatchObject({
      code: "invalid_input",
      message: "Feedback is about an answer; this message is not one.",
    });
    expect(await failure(s.core, "feedback.rate", { messageId: "nope", rating: "good" })).toMatchObject({
      code: "not_found",
    });
    expect(await failure(s.core, "feedback.rate", { messageId: answer.id, rating: "meh" })).toMatchObject({
      code: "invalid_input",
    });
    expect(await failure(s.core, "privacy.update", { endpoint: "http://example.com" })).toMatchObject({
      code: "invalid_input",
      message: "The feedback endpoint must use https (plain http only to localhost).",
    });
  });
});
