/**
 * Import takes what export writes (issue 15, item 3): a multi-megabyte export made through the
 * HTTP API goes back in through the HTTP API unchanged; only conversations.import has the big
 * body limit, and a body over it gets a 413 in the app's error shape.
 */
import { randomUUID } from "node:crypto";
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { IMPORT_JSON_MAX_CHARS } from "../api";
import { assembleCore, type Core } from "../core";
import { FakeEngine } from "../../testing/engine/fake-engine";
import { testDir } from "../../testing/core/temp-dir";
import { API_BODY_LIMIT, IMPORT_BODY_LIMIT } from "./api-routes";
import { buildServer } from "./app";
import { readJson, type EnvelopeReply } from "../../testing/server/test-core";

const API_KEY = "test-key-0123456789";
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(): Promise<{ core: Core; url: string }> {
  const dir = testDir();
  const core = await assembleCore({ dataDir: dir, log: () => undefined }, () => new FakeEngine());
  cleanups.push(() => core.close());
  const app = await buildServer({
    core,
    apiKey: API_KEY,
    rendererDir: "/nonexistent-renderer",
    host: "127.0.0.1",
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  cleanups.push(() => app.close());
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return { core, url: `http://127.0.0.1:${address.port}` };
}

async function call<T>(
  url: string,
  method: string,
  input: unknown,
): Promise<{ status: number; body: EnvelopeReply<T> }> {
  const res = await fetch(`${url}/api/call/${method}`, {
    method: "POST",
    headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  return { status: res.status, body: await readJson<EnvelopeReply<T>>(res) };
}

/** Long message text with what escaping and UTF-8 make bigger: quotes, backslashes, newlines, CJK, emoji. */
function longText(seed: number, chars: number): string {
  const piece = `Line ${seed}: "quoted" \\ back\\slash\ttab\n漢字かな交じり 🍵🍰 café — ${"x".repeat(seed % 17)}\n`;
  return piece.repeat(Math.ceil(chars / piece.length)).slice(0, chars);
}

/** A file as export writes it: 4 conversations of 8 messages of 200k characters (6.4M characters). */
function bigExport(): string {
  const t0 = 1_700_000_000_000;
  const conversations = Array.from({ length: 4 }, (_, c) => ({
    id: randomUUID(),
    title: `Conversation ${c} "big"`,
    createdAt: t0 + c,
    updatedAt: t0 + c + 100,
    adapters: "auto",
    messages: Array.from({ length: 8 }, (_, m) => ({
      id: randomUUID(),
      role: m % 2 === 0 ? "user" : "assistant",
      content: longText(c * 8 + m, 200_000),
      status: "complete",
      createdAt: t0 + c * 100 + m,
    })),
  }));
  return JSON.stringify({
    format: "macaron-export",
    version: 1,
    exportedAt: t0,
    conversations,
    memories: [],
  });
}

/** An export with its ids and export time taken out: what must survive a round trip exactly. */
function withoutIds(json: string): unknown {
  const doc = JSON.parse(json) as { exportedAt?: number; conversations: Record<string, unknown>[] };
  delete doc.exportedAt;
  for (const c of doc.conversations) {
    delete c.id;
    for (const m of c.messages as Record<string, unknown>[]) {
      delete m.id;
      delete m.conversationId;
    }
  }
  return doc;
}

/** Sends headers announcing `length` bytes and a first chunk, and reads the answer. */
function postAnnouncing(
  url: string,
  path: string,
  length: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path,
        method: "POST",
        headers: {
          authorization: `Bearer ${API_KEY}`,
          "content-type": "application/json",
          "content-length": String(length),
        },
      },
      (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.write('{"json":"');
  });
}

describe("conversations.import over HTTP", () => {
  it("the body limit admits any file the method accepts: 3 bytes a character at most", () => {
    // What a valid file holds that grows in a JSON body: quotes, backslashes, whitespace, non-ASCII.
    const file = JSON.stringify({ t: '"\\\n\t漢字 🍵', n: 1 }, null, 2);
    expect(Buffer.byteLength(JSON.stringify({ json: file }))).toBeLessThanOrEqual(file.length * 3 + 16);
    expect(IMPORT_BODY_LIMIT).toBeGreaterThan(IMPORT_JSON_MAX_CHARS * 3);
  });

  it("a multi-megabyte export made through the API is imported back through the API unchanged", async () => {
    const a = await serve();
    const seed = await call(a.url, "conversations.import", { json: bigExport() });
    expect(seed.status).toBe(200);

    const exported = await call<{ json: string }>(a.url, "conversations.export", {});
    expect(exported.status).toBe(200);
    const json = exported.body.value.json;
    const bodyBytes = Buffer.byteLength(JSON.stringify({ json }));
    expect(bodyBytes).toBeGreaterThan(5 * 1024 * 1024);
    expect(bodyBytes).toBeGreaterThan(API_BODY_LIMIT * 5);

    const b = await serve();
    const imported = await call(b.url, "conversations.import", { json });
    expect(imported.status).toBe(200);
    expect(imported.body.value).toEqual({ conversations: 4, messages: 32, memories: 0 });
    const again = await call<{ json: string }>(b.url, "conversations.export", {});
    expect(withoutIds(again.body.value.json)).toEqual(withoutIds(json));
  }, 60_000);

  it("other calls keep the small limit, in the app's error shape", async () => {
    const { url } = await serve();
    const res = await call(url, "conversations.create", { title: "x".repeat(API_BODY_LIMIT) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      ok: false,
      error: {
        code: "invalid_input",
        message: `The request body is too large: this call takes at most ${API_BODY_LIMIT} bytes.`,
      },
    });
  });

  it("a body over the import limit gets a clear 413 in the app's error shape", async () => {
    const { url } = await serve();
    const res = await postAnnouncing(url, "/api/call/conversations.import", IMPORT_BODY_LIMIT + 1);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({
      ok: false,
      error: {
        code: "invalid_input",
        message: `The request body is too large: this call takes at most ${IMPORT_BODY_LIMIT} bytes.`,
      },
    });
  });
});
