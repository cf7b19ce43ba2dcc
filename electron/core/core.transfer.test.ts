/** Export and import through the API: round trip, and untrusted files refused whole. */
import { afterEach, describe, expect, it } from "vitest";
import type { Conversation, ConversationDetail, Memory, Message } from "../api";
import { assembleCore, type Core } from "./index";
import { EventRecorder } from "../../testing/core/events";
import { FakeEngine } from "../../testing/engine/fake-engine";
import { testDir } from "../../testing/core/temp-dir";
import { value } from "../../testing/core/result-value";

const ctx = { transport: "http" } as const;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(): Promise<{ core: Core; events: EventRecorder }> {
  const dir = testDir();
  const core = await assembleCore({ dataDir: dir, log: () => undefined }, () => new FakeEngine());
  cleanups.push(() => core.close());
  return { core, events: new EventRecorder((l) => core.subscribe(l)) };
}

/** What must survive a round trip: everything but ids. */
function content(detail: ConversationDetail) {
  const { id: _id, ...conversation } = detail.conversation;
  return {
    conversation,
    messages: detail.messages.map(({ id: _m, conversationId: _c, memoriesUsed, ...m }) => ({
      ...m,
      memoriesUsed: memoriesUsed.map((u) => u.text),
    })),
  };
}

async function filled(): Promise<{ core: Core; conv: Conversation }> {
  const { core, events } = await start();
  await core.dispatch("models.openDemo", {}, ctx);
  value(await core.dispatch("memories.create", { text: "The user likes green tea" }, ctx));
  const conv = value<Conversation>(await core.dispatch("conversations.create", {}, ctx));
  for (const text of ["Which tea is best?", "And how hot should the water be?"]) {
    const done = events.next("chat.done");
    value(await core.dispatch("chat.send", { conversationId: conv.id, text }, ctx));
    await done;
  }
  return { core, conv };
}

describe("conversations.export / conversations.import", () => {
  it("round trip: export, import elsewhere, same content with new ids; importing twice adds a copy", async () => {
    const { core, conv } = await filled();
    const original = value<ConversationDetail>(
      await core.dispatch("conversations.get", { id: conv.id }, ctx),
    );
    expect(original.messages[1]!.memoriesUsed.map((m) => m.text)).toEqual(["The user likes green tea"]);
    expect(original.messages[1]!.routing).not.toBeNull();
    const exported = value<{ fileName: string; json: string }>(
      await core.dispatch("conversations.export", {}, ctx),
    );
    expect(exported.fileName).toMatch(/^macaron-export-\d{4}-\d{2}-\d{2}\.json$/);
    const doc = JSON.parse(exported.json) as {
      format: string;
      version: number;
      conversations: unknown[];
      memories: unknown[];
    };
    expect(doc).toMatchObject({ format: "macaron-export", version: 1 });
    expect(doc.conversations).toHaveLength(1);
    expect(doc.memories).toHaveLength(1);
    const one = value<{ fileName: string }>(
      await core.dispatch("conversations.export", { id: conv.id }, ctx),
    );
    expect(one.fileName).toMatch(/^macaron-which-tea-is-best-\d{4}-\d{2}-\d{2}\.json$/);

    const other = await start();
    const counts = value(await other.core.dispatch("conversations.import", { json: exported.json }, ctx));
    expect(counts).toEqual({ conversations: 1, messages: 4, memories: 1 });
    expect(other.events.of("conversations.changed")).toHaveLength(1);
    expect(other.events.of("memories.changed")).toHaveLength(1);
    const [imported] = value<Conversation[]>(await other.core.dispatch("conversations.list", {}, ctx));
    expect(imported!.id).not.toBe(conv.id);
    const copy = value<ConversationDetail>(
      await other.core.dispatch("conversations.get", { id: imported!.id }, ctx),
    );
    expect(content(copy)).toEqual(content(original));
    const memories = value<Memory[]>(await other.core.dispatch("memories.list", {}, ctx));
    expect(copy.messages[1]!.memoriesUsed).toEqual([
      { id: memories[0]!.id, text: "The user likes green tea" },
    ]);
    // Search works on imported messages.
    expect(
      value<unknown[]>(await other.core.dispatch("conversations.search", { query: "water" }, ctx)),
    ).toHaveLength(1);

    // Importing into the original adds a second copy, never overwrites; known memories are reused.
    expect(value(await core.dispatch("conversations.import", { json: exported.json }, ctx))).toEqual({
      conversations: 1,
      messages: 4,
      memories: 0,
    });
    expect(value<Conversation[]>(await core.dispatch("conversations.list", {}, ctx))).toHaveLength(2);
    expect(value<ConversationDetail>(await core.dispatch("conversations.get", { id: conv.id }, ctx))).toEqual(
      original,
    );
  });

  it("turns a streaming message into an interrupted one", async () => {
    const { core } = await start();
    const json = JSON.stringify({
      format: "macaron-export",
      version: 1,
      exportedAt: 1,
      conversations: [
        {
          id: "c",
          title: "Cut",
          createdAt: 1,
          updatedAt: 2,
          messages: [
            { id: "a", role: "user", content: "hi", status: "complete", createdAt: 1 },
            { id: "b", role: "assistant", content: "hal", status: "streaming", createdAt: 2 },
          ],
        },
      ],
    });
    value(await core.dispatch("conversations.import", { json }, ctx));
    const [c] = value<Conversation[]>(await core.dispatch("conversations.list", {}, ctx));
    const detail = value<ConversationDetail>(await core.dispatch("conversations.get", { id: c!.id }, ctx));
    expect(detail.messages.map((m: Message) => [m.content, m.status])).toEqual([
      ["hi", "complete"],
      ["hal", "interrupted"],
    ]);
  });

  it("refuses bad files with a clear invalid_input and writes nothing", async () => {
    const { core } = await start();
    const base = () => ({
      format: "macaron-export",
      version: 1,
      exportedAt: 1,
      conversations: [
        {
          id: "c",
          title: "T",
          createdAt: 1,
          updatedAt: 1,
          messages: [{ id: "m", role: "user", content: "hi", status: "complete", createdAt: 1 }],
        },
        { id: "d", title: "U", createdAt: 1, updatedAt: 1, messages: [] },
      ],
      memories: [],
    });
    type Doc = ReturnType<typeof base> & Record<string, unknown>;
    const variants: [string, string, RegExp][] = [
      ["malformed JSON", '{"format": "macaron-export", ', /not valid JSON/],
      ["not an object", "[1,2]", /not a Macaron export/],
      ["wrong format", JSON.stringify({ ...base(), format: "other" }), /not a Macaron export/],
      [
        "newer version",
        JSON.stringify({ ...base(), version: 2 }),
        /format version 2; this version of Macaron reads version 1/,
      ],
      [
        "huge string",
        JSON.stringify({
          ...base(),
          conversations: [{ ...base().conversations[1], title: "x".repeat(10_000) }],
        }),
        /conversations\.0\.title/,
      ],
      [
        "deep nesting",
        `{"format":"macaron-export","version":1,"x":${"[".repeat(5000)}${"]".repeat(5000)}}`,
        /nested more than 64 levels/,
      ],
      [
        "__proto__ key",
        JSON.stringify(base()).replace('"title":"T"', '"title":"T","__proto__":{"polluted":true}'),
        /forbidden key "__proto__"/,
      ],
      [
        "constructor key",
        JSON.stringify(base()).replace('"id":"m"', '"id":"m","constructor":{}'),
        /forbidden key "constructor"/,
      ],
      [
        "duplicate ids",
        JSON.stringify(
          (() => {
            const d: Doc = base();
            d.conversations[1]!.id = "c";
            return d;
          })(),
        ),
        /duplicate conversation id "c"/,
      ],
      [
        "wrong types",
        JSON.stringify(
          (() => {
            const d = base() as unknown as { conversations: { createdAt: unknown }[] };
            d.conversations[0]!.createdAt = "yesterday";
            return d;
          })(),
        ),
        /conversations\.0\.createdAt/,
      ],
      ["extra key", JSON.stringify({ ...base(), surprise: 1 }), /surprise|Unrecognized/i],
      ["bad status", JSON.stringify(base()).replace('"status":"complete"', '"status":"done"'), /status/],
    ];
    for (const [name, json, message] of variants) {
      const result = await core.dispatch("conversations.import", { json }, ctx);
      expect(result.ok, name).toBe(false);
      if (!result.ok) {
        expect(result.error.code, name).toBe("invalid_input");
        expect(result.error.message, name).toMatch(/^This file cannot be imported: /);
        expect(result.error.message, name).toMatch(message);
      }
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(value<Conversation[]>(await core.dispatch("conversations.list", {}, ctx))).toEqual([]);
    expect(value<Memory[]>(await core.dispatch("memories.list", {}, ctx))).toEqual([]);
  });
});
