import { randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  BatchResponse,
  DeleteResponse,
  LIMITS,
  RegisterResponse,
  type FeedbackItem,
} from "../common/feedback-protocol";
import { startCloud, type RunningCloud } from "./server";
import { fetchExport, fetchExportReport } from "./prepare/client";
import { makeItem, TEST_VERSIONS } from "../testing/cloud/items";
import { testDir } from "../testing/core/temp-dir";

let dir: string;
let cloud: RunningCloud;

beforeEach(async () => {
  dir = testDir("macaron-cloud-");
  cloud = await startCloud({ dataDir: dir, adminKey: "admin-key-1234" });
});
afterEach(async () => {
  await cloud.close();
});

async function register(
  installId: string = randomUUID(),
  currentToken?: string,
): Promise<{ installId: string; token: string }> {
  const res = await fetch(`${cloud.url}/v1/installs`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(currentToken && { authorization: `Bearer ${currentToken}` }),
    },
    body: JSON.stringify({ installId }),
  });
  expect(res.status).toBe(200);
  return RegisterResponse.parse(await res.json());
}

function postBatch(token: string | null, body: unknown, gzip = true, raw?: Buffer): Promise<Response> {
  const json = Buffer.from(JSON.stringify(body));
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  if (gzip) headers["content-encoding"] = "gzip";
  return fetch(`${cloud.url}/v1/feedback/batches`, {
    method: "POST",
    headers,
    body: raw ?? (gzip ? gzipSync(json) : json),
  });
}

const batch = (installId: string, items: unknown[], batchId = "batch-0001") => ({
  protocol: 1,
  installId,
  batchId,
  items,
});

describe("cloud service", () => {
  it("answers health", async () => {
    const res = await fetch(`${cloud.url}/v1/health`);
    expect(await res.json()).toEqual({ ok: true, protocol: 1, items: 0 });
  });

  it("registers installs, keeps only a token hash and rotates the token on re-register", async () => {
    const a = await register();
    const row = cloud.store.db.prepare("SELECT token_hash FROM installs").get() as { token_hash: string };
    expect(row.token_hash).not.toContain(a.token);
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    const again = await register(a.installId, a.token);
    expect(again.token).not.toBe(a.token);
    expect((await postBatch(a.token, batch(a.installId, [makeItem("key-00001")]))).status).toBe(401);
    expect((await postBatch(again.token, batch(a.installId, [makeItem("key-00001")]))).status).toBe(200);
  });

  it("refuses missing or unknown tokens (401) and a token of another install (403)", async () => {
    const a = await register();
    const b = await register();
    expect((await postBatch(null, batch(a.installId, [makeItem("key-00001")]))).status).toBe(401);
    expect((await postBatch("nope-nope-nope", batch(a.installId, [makeItem("key-00001")]))).status).toBe(401);
    const res = await postBatch(b.token, batch(a.installId, [makeItem("key-00001")]));
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: "installId does not match the token" });
  });

  it("refuses a bad envelope with 400 and a reason, and rejects bad items one by one", async () => {
    const a = await register();
    const bad = await postBatch(a.token, {
      protocol: 2,
      installId: a.installId,
      batchId: "b-000001",
      items: [],
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/protocol/);
    const notJson = await postBatch(a.token, null, true, gzipSync("{nope"));
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: string }).error).toMatch(/invalid JSON/);
    const notGzip = await postBatch(a.token, null, true, Buffer.from("plain"));
    expect(notGzip.status).toBe(400);

    const items: unknown[] = [
      makeItem("good-0001"),
      makeItem("text-0001", { consent: "ratings" }),
      makeItem("domain-01", { domain: "astrology" }),
      { ...makeItem("malformed"), kind: "shout" },
      makeItem("ratings-1", { consent: "ratings", prompt: null, response: null }),
    ];
    const res = await postBatch(a.token, batch(a.installId, items));
    expect(res.status).toBe(200);
    const body = BatchResponse.parse(await res.json());
    expect(body.accepted.sort()).toEqual(["good-0001", "ratings-1"]);
    expect(body.duplicates).toEqual([]);
    expect(body.rejected.slice(0, 2)).toEqual([
      { key: "text-0001", reason: 'text fields present with consent "ratings"' },
      { key: "domain-01", reason: 'unknown domain "astrology"' },
    ]);
    expect(body.rejected[2]?.key).toBe("malformed");
    expect(body.rejected[2]?.reason).toMatch(/^malformed: kind/);
    expect(body.rejected).toHaveLength(3);
    expect(cloud.store.countItems()).toBe(2);
  });

  it("accepts uncompressed JSON and refuses other encodings", async () => {
    const a = await register();
    expect((await postBatch(a.token, batch(a.installId, [makeItem("plain-001")]), false)).status).toBe(200);
    const res = await fetch(`${cloud.url}/v1/feedback/batches`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-encoding": "br",
        authorization: `Bearer ${a.token}`,
      },
      body: "x",
    });
    expect(res.status).toBe(415);
  });

  it("dedupes by (install, idempotency key), also inside one batch", async () => {
    const a = await register();
    const b = await register();
    const first = BatchResponse.parse(
      await (await postBatch(a.token, batch(a.installId, [makeItem("k-0000001")]))).json(),
    );
    expect(first.accepted).toEqual(["k-0000001"]);
    const again = BatchResponse.parse(
      await (
        await postBatch(
          a.token,
          batch(a.installId, [makeItem("k-0000001"), makeItem("k-0000002"), makeItem("k-0000002")]),
        )
      ).json(),
    );
    expect(again).toEqual({ accepted: ["k-0000002"], duplicates: ["k-0000001", "k-0000002"], rejected: [] });
    // The same key from another install is another item.
    const other = BatchResponse.parse(
      await (await postBatch(b.token, batch(b.installId, [makeItem("k-0000001")]))).json(),
    );
    expect(other.accepted).toEqual(["k-0000001"]);
    expect(cloud.store.countItems()).toBe(3);
  });

  describe("size limits", () => {
    it("refuses an uncompressed body over maxBatchBytes with 413", async () => {
      const a = await register();
      const big = makeItem("big-00001", { response: "x".repeat(LIMITS.maxBatchBytes) });
      const res = await postBatch(a.token, batch(a.installId, [big]), false);
      expect(res.status).toBe(413);
    });

    it("refuses a compressed body over maxCompressedBytes with 413", async () => {
      const a = await register();
      const res = await postBatch(a.token, null, true, Buffer.alloc(LIMITS.maxCompressedBytes + 1, 7));
      expect(res.status).toBe(413);
      expect(((await res.json()) as { error: string }).error).toMatch(/compressed body over/);
    });

    it("refuses a gzip bomb without inflating it (stops at maxBatchBytes)", async () => {
      const a = await register();
      // 100 MB of zeros is ~100 KB of gzip: small on the wire, under the compressed cap.
      const bomb = gzipSync(Buffer.alloc(100 * 1024 * 1024), { level: 9 });
      expect(bomb.length).toBeLessThan(LIMITS.maxCompressedBytes);
      const before = process.memoryUsage().arrayBuffers;
      const res = await postBatch(a.token, null, true, bomb);
      expect(res.status).toBe(413);
      expect(((await res.json()) as { error: string }).error).toMatch(/inflates past 1000000 bytes/);
      // Inflating it all would allocate 100 MB; the cap keeps the service's memory flat.
      expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(50 * 1024 * 1024);
    });
  });

  it("deletes every item of an install, and only with its own token", async () => {
    const a = await register();
    const b = await register();
    await postBatch(a.token, batch(a.installId, [makeItem("a-0000001"), makeItem("a-0000002")]));
    await postBatch(b.token, batch(b.installId, [makeItem("b-0000001")]));
    const url = `${cloud.url}/v1/installs/${a.installId}/data`;
    expect((await fetch(url, { method: "DELETE" })).status).toBe(401);
    expect(
      (await fetch(url, { method: "DELETE", headers: { authorization: `Bearer ${b.token}` } })).status,
    ).toBe(403);
    const res = await fetch(url, { method: "DELETE", headers: { authorization: `Bearer ${a.token}` } });
    expect(DeleteResponse.parse(await res.json())).toEqual({ installId: a.installId, deletedItems: 2 });
    expect(cloud.store.countItems(a.installId)).toBe(0);
    expect(cloud.store.countItems(b.installId)).toBe(1);
  });
});

describe("dataset export", () => {
  const prompt = (text: string): FeedbackItem["prompt"] => [
    { role: "system", text: "Be brief." },
    { role: "user", text },
  ];

  async function exportLines(domain: string, type?: string, key = "admin-key-1234") {
    const q = type ? `?type=${type}` : "";
    const res = await fetch(`${cloud.url}/v1/export/${domain}.jsonl${q}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const text = await res.text();
    const stats = res.headers.get("x-export-stats");
    return {
      status: res.status,
      lines:
        res.status === 200
          ? text
              .split("\n")
              .filter(Boolean)
              .map((l) => JSON.parse(l) as unknown)
          : [],
      stats: stats ? (JSON.parse(stats) as { written: number; dropped: Record<string, number> }) : null,
    };
  }

  async function seed(items: FeedbackItem[]) {
    const a = await register();
    const res = await postBatch(a.token, batch(a.installId, items));
    expect(BatchResponse.parse(await res.json()).rejected).toEqual([]);
  }

  it("needs the admin key and a known type", async () => {
    expect((await exportLines("chat", "sft", "wrong-key")).status).toBe(401);
    expect((await exportLines("chat", "dpo")).status).toBe(400);
    const report = await fetch(`${cloud.url}/v1/export/chat.report.json`, {
      headers: { authorization: "Bearer wrong-key" },
    });
    expect(report.status).toBe(401);
    expect(
      (
        await fetch(`${cloud.url}/v1/export/chat.csv`, {
          headers: { authorization: "Bearer admin-key-1234" },
        })
      ).status,
    ).toBe(404);
  });

  it("writes SFT chat lines from corrections and good ratings, filtering malformed, PII and duplicates", async () => {
    await seed([
      makeItem("corr-0001", {
        kind: "correction",
        rating: null,
        prompt: prompt("Capital of France?"),
        response: "Lyon",
        correction: "Paris.",
      }),
      makeItem("good-0001", { prompt: prompt("2+2?"), response: "4" }),
      // The same conversation from another click: a duplicate line.
      makeItem("good-0002", { prompt: prompt("2+2?"), response: "4" }),
      makeItem("bad-00001", { rating: "bad", prompt: prompt("2+2?"), response: "5" }),
      makeItem("pii-00001", { prompt: prompt("mail me at jane.doe@example.com"), response: "ok" }),
      makeItem("noprompt1", {
        kind: "correction",
        rating: null,
        prompt: null,
        response: "a",
        correction: "b",
      }),
      makeItem("notext-01", { consent: "ratings", prompt: null, response: null }),
      makeItem("code-0001", { domain: "coding", prompt: prompt("sort?"), response: "sorted()" }),
    ]);
    // A row stored by an older service that skipped the checks: still filtered at export.
    cloud.store.db
      .prepare("INSERT INTO items VALUES ('x','leak-0001','rating','chat','ratings',0,0,'b',?)")
      .run(
        JSON.stringify(
          makeItem("leak-0001", { consent: "ratings", prompt: prompt("secret"), response: "s" }),
        ),
      );
    cloud.store.db
      .prepare("INSERT INTO items VALUES ('x','junk-0001','rating','chat','ratings',0,0,'b','{oops')")
      .run();

    const { status, lines, stats } = await exportLines("chat");
    expect(status).toBe(200);
    expect(lines).toEqual([
      {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Capital of France?" },
          { role: "assistant", content: "Paris." },
        ],
      },
      {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "2+2?" },
          { role: "assistant", content: "4" },
        ],
      },
    ]);
    expect(stats).toMatchObject({ written: 2, dropped: { malformed: 2, consent: 1, pii: 1, duplicate: 1 } });
  });

  it("writes TRL preference pairs from regenerations and good/bad ratings on the same prompt", async () => {
    await seed([
      makeItem("regen-001", {
        kind: "regeneration",
        rating: null,
        prompt: prompt("Hi"),
        response: null,
        rejected: "Go away.",
        chosen: "Hello! How can I help?",
      }),
      makeItem("regen-002", {
        kind: "regeneration",
        rating: null,
        prompt: prompt("Hi"),
        response: null,
        rejected: "Go away.",
        chosen: "Hello! How can I help?",
      }),
      makeItem("regen-pii", {
        kind: "regeneration",
        rating: null,
        prompt: prompt("Hi"),
        response: null,
        rejected: "call 555-123-4567",
        chosen: "ok",
      }),
      makeItem("regen-bad", {
        kind: "regeneration",
        rating: null,
        prompt: prompt("Hi"),
        response: null,
        rejected: null,
        chosen: "x",
      }),
      makeItem("good-0001", { prompt: prompt("2+2?"), response: "4" }),
      makeItem("bad-00001", { rating: "bad", prompt: prompt("2+2?"), response: "5" }),
      makeItem("lonely-01", { rating: "bad", prompt: prompt("3+3?"), response: "7" }),
    ]);
    const { lines, stats } = await exportLines("chat", "preference");
    const p = [{ role: "system", content: "Be brief." }];
    expect(lines).toEqual([
      {
        prompt: [...p, { role: "user", content: "Hi" }],
        chosen: [{ role: "assistant", content: "Hello! How can I help?" }],
        rejected: [{ role: "assistant", content: "Go away." }],
      },
      {
        prompt: [...p, { role: "user", content: "2+2?" }],
        chosen: [{ role: "assistant", content: "4" }],
        rejected: [{ role: "assistant", content: "5" }],
      },
    ]);
    expect(stats).toMatchObject({ written: 2, dropped: { malformed: 1, consent: 0, pii: 1, duplicate: 1 } });
  });

  it("serves the report of every count, both splits, and every domain with base-model answers as base", async () => {
    // Thirty different questions. (Prompts that differ only in a number, "Question 1?" and
    // "Question 2?", fold as near-duplicates of one prompt since folding compares prompts alone.)
    const topics = [
      "volcanoes",
      "penguins",
      "glaciers",
      "tornadoes",
      "satellites",
      "bicycles",
      "lighthouses",
      "submarines",
      "orchestras",
      "cathedrals",
      "dinosaurs",
      "earthquakes",
      "telescopes",
      "vineyards",
      "pyramids",
      "hurricanes",
      "butterflies",
      "skyscrapers",
      "rainforests",
      "microscopes",
      "windmills",
      "tapestries",
      "comets",
      "harbours",
      "monasteries",
      "avalanches",
      "planetariums",
      "orchids",
      "locomotives",
      "galaxies",
    ];
    const questions = topics.map((t) => `Tell me about ${t}?`);
    await seed([
      ...questions.map((q, i) =>
        makeItem(`q-${String(i).padStart(6, "0")}`, { prompt: prompt(q), response: `A${i}` }),
      ),
      makeItem("bad-00001", { rating: "bad", prompt: prompt("2+2?"), response: "5" }),
      makeItem("corr-0001", {
        kind: "correction",
        rating: null,
        prompt: prompt("2+2?"),
        response: "5",
        correction: "4",
      }),
      makeItem("long-0001", { prompt: prompt("Essay?"), response: "word ".repeat(200) }),
      // Answered by the base model alone: no adapter, so no domain.
      makeItem("base-0001", {
        domain: null,
        versions: { ...TEST_VERSIONS, adapters: [] },
        prompt: prompt("Hi"),
        response: "Hello!",
      }),
      makeItem("base-0002", {
        domain: null,
        consent: "ratings",
        rating: "bad",
        prompt: null,
        response: null,
      }),
      makeItem("code-0001", {
        domain: "coding",
        kind: "copy",
        rating: null,
        prompt: prompt("sort?"),
        response: "sorted()",
      }),
    ]);
    const req = { url: cloud.url, adminKey: "admin-key-1234", domain: "chat", maxTokens: 200 };
    const report = await fetchExportReport(req);
    expect(report).toMatchObject({
      type: "sft",
      domain: "chat",
      split: "train",
      options: { maxTokens: 200, heldoutShare: 0.1, bytesPerToken: 3 },
      items: 33,
      byKind: { rating: 32, correction: 1 },
      candidates: 32,
      dropped: { tooLong: 1, thumbsDown: 0, malformed: 0 },
      domains: {
        chat: { items: 33, byKind: { rating: 32, correction: 1 } },
        coding: { items: 1, byKind: { copy: 1 } },
        base: { items: 2, byKind: { rating: 2 } },
      },
    });
    expect(report.splits.train + report.splits.heldout).toBe(31);
    expect(report.splits.heldout).toBeGreaterThan(0);

    // Each split over HTTP: disjoint by prompt, together the whole dataset, the same on a re-export.
    const train = await fetchExport(req);
    const heldout = await fetchExport({ ...req, split: "heldout" });
    expect(train.report).toEqual(report);
    expect(heldout.report).toEqual({ ...report, split: "heldout", written: report.splits.heldout });
    const question = (l: unknown) => (l as { messages: { content: string }[] }).messages[1]!.content;
    const trainQs = train.lines.map(question);
    const heldoutQs = heldout.lines.map(question);
    expect(trainQs).toHaveLength(report.splits.train);
    expect(heldoutQs).toHaveLength(report.splits.heldout);
    expect(trainQs.filter((q) => heldoutQs.includes(q))).toEqual([]);
    expect([...trainQs, ...heldoutQs].sort()).toEqual([...questions, "2+2?"].sort());
    expect((await fetchExport(req)).jsonl).toBe(train.jsonl);
    // Only the correction of the thumbs-down answer is a target.
    const all = [...train.lines, ...heldout.lines].map(
      (l) => (l as { messages: { content: string }[] }).messages[2]!.content,
    );
    expect(all).toContain("4");
    expect(all).not.toContain("5");

    // The base model's answers export as the "base" domain.
    const base = await fetchExport({ ...req, domain: "base", heldoutShare: 0 });
    expect(base.lines).toEqual([
      {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Hi" },
          { role: "assistant", content: "Hello!" },
        ],
      },
    ]);
    expect(base.report).toMatchObject({ domain: "base", items: 2, candidates: 1, written: 1 });
  });

  it("keeps an answer rated bad in any domain out of every dataset", async () => {
    await seed([
      makeItem("good-0001", { prompt: prompt("Capital?"), response: "Bonn" }),
      makeItem("good-0002", { prompt: prompt("Capital?"), response: "Berlin" }),
      makeItem("bad-00001", {
        domain: "coding",
        rating: "bad",
        prompt: prompt("Capital?"),
        response: "bonn.",
      }),
    ]);
    const { lines, report } = await fetchExport({
      url: cloud.url,
      adminKey: "admin-key-1234",
      domain: "chat",
      heldoutShare: 0,
    });
    expect(lines.map((l) => (l as { messages: { content: string }[] }).messages[2]!.content)).toEqual([
      "Berlin",
    ]);
    expect(report.dropped.thumbsDown).toBe(1);
  });

  it("refuses bad export options with 400 and the reason", async () => {
    const get = async (q: string) => {
      const res = await fetch(`${cloud.url}/v1/export/chat.report.json?${q}`, {
        headers: { authorization: "Bearer admin-key-1234" },
      });
      return { status: res.status, body: (await res.json()) as { error?: string } };
    };
    expect(await get("split=test")).toEqual({
      status: 400,
      body: { error: 'split must be "train" or "heldout"' },
    });
    expect((await get("maxTokens=abc")).body.error).toMatch(/^maxTokens must be an integer/);
    expect((await get("maxTokens=0")).status).toBe(400);
    expect((await get("heldoutShare=1.5")).body.error).toMatch(/^heldoutShare must be/);
    expect((await get("bytesPerToken=0.5")).body.error).toMatch(/^bytesPerToken must be/);
    expect(
      (await get("type=preference&split=heldout&maxTokens=1024&heldoutShare=0.2&bytesPerToken=1")).status,
    ).toBe(200);
  });

  it("exports an empty file for a domain without items", async () => {
    const { status, lines, stats } = await exportLines("agent", "sft");
    expect(status).toBe(200);
    expect(lines).toEqual([]);
    expect(stats?.written).toBe(0);
  });
});
