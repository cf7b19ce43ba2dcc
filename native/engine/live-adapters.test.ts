import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeWrongBaseAdapter } from "../gguf/adapters";
import { writeFixtures, type FixturePaths } from "../gguf/fixtures";
import { AdapterError, adapterSetKey, normalizeAdapters } from "./live-adapters";
import { loadLlamaBackend } from "./llama-backend";
import { ModelSession } from "./model-session";
import type { AdapterUse, ChatTurn, KvPolicy } from "../../common/engine-protocol";
import { suiteDir } from "../../testing/core/temp-dir";

// Real node-llama-cpp on the tiny fixture model and its four output-layer demo adapters.
const dir = suiteDir("macaron-live-adapters-");
let fx: FixturePaths;
let session: ModelSession;
const path = (id: string) => fx.adapters.find((a) => a.id === id)!.path;
const use = (id: string, scale = 1): AdapterUse => ({ path: path(id), scale });
const hello: ChatTurn[] = [{ role: "user", text: "hello there" }];

function generate(history: ChatTurn[], adapters: AdapterUse[], kvPolicy?: KvPolicy, maxTokens = 8) {
  return session.generate(
    history,
    { temperature: 0, maxTokens, adapters, kvPolicy },
    () => {},
    new AbortController().signal,
  );
}

beforeAll(async () => {
  fx = await writeFixtures(dir.path);
  session = await ModelSession.open(await loadLlamaBackend(1), fx.basePath, { contextSize: 1024 }, () => {});
});

afterAll(async () => {
  await session?.dispose();
});

describe("normalizeAdapters", () => {
  it("drops zero scales, merges repeats and sorts, so equal sets get equal keys", () => {
    const a = normalizeAdapters([
      { path: "/b.gguf", scale: 0.5 },
      { path: "/a.gguf", scale: 1 },
      { path: "/b.gguf", scale: 0.25 },
      { path: "/c.gguf", scale: 0 },
    ]);
    expect(a).toEqual([
      { path: "/a.gguf", scale: 1 },
      { path: "/b.gguf", scale: 0.75 },
    ]);
    expect(adapterSetKey(a)).toBe(adapterSetKey(normalizeAdapters([...a].reverse())));
    expect(adapterSetKey(normalizeAdapters(undefined))).toBe("");
  });
});

describe("live LoRA switching on one context (ModelSession)", () => {
  it("uses the same lifecycle-utils copy as node-llama-cpp, so our context lock is its lock", () => {
    const ours = createRequire(import.meta.url).resolve("lifecycle-utils");
    const theirs = createRequire(createRequire(import.meta.url).resolve("node-llama-cpp")).resolve(
      "lifecycle-utils",
    );
    expect(ours).toBe(theirs);
  });

  it("gives each demo adapter its greedy pattern, and the base back with no adapters", async () => {
    const base = (await generate(hello, [])).text;
    expect(base).not.toMatch(/^(.)\1+$/);
    expect((await generate(hello, [use("chat")])).text).toBe("cccccccc");
    expect((await generate(hello, [use("coding")])).text).toBe("{{{{{{{{");
    expect((await generate(hello, [use("agent")])).text).toBe("aaaaaaaa");
    expect((await generate(hello, [use("ui")])).text).toBe("uuuuuuuu");
    expect((await generate(hello, [])).text).toBe(base);
  });

  it("blends adapters by scale", async () => {
    expect((await generate(hello, [use("chat", 0.5), use("coding", 0.5)])).text).toBe("c{c{c{c{");
    expect((await generate(hello, [use("chat", 0.6), use("coding", 0.4)])).text).toBe("cccccccc");
  });

  it.each<KvPolicy>(["reevaluate", "sequence-per-set", "activated"])(
    "switches adapters between turns of one conversation (%s)",
    async (policy) => {
      const turn1 = await generate(hello, [use("chat")], policy);
      expect(turn1.text).toBe("cccccccc");
      const history2: ChatTurn[] = [
        ...hello,
        { role: "assistant", text: turn1.text },
        { role: "user", text: "code?" },
      ];
      expect((await generate(history2, [use("coding")], policy)).text).toBe("{{{{{{{{");
      const history3: ChatTurn[] = [
        ...history2,
        { role: "assistant", text: "{{{{{{{{" },
        { role: "user", text: "hi" },
      ];
      expect((await generate(history3, [use("chat")], policy)).text).toBe("cccccccc");
    },
  );

  it("refuses an adapter made for another base with a clear error and keeps working", async () => {
    const before = (await generate(hello, [use("coding")])).text;
    const wrong = await writeWrongBaseAdapter(join(dir.path, "wrong-base.gguf"));
    const error = await generate(hello, [use("chat"), { path: wrong, scale: 1 }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdapterError);
    expect((error as Error).message).toMatch(
      /wrong-base\.gguf" does not fit the loaded model: output\.weight/,
    );
    // The failed request changed nothing: the previous set still applies and the engine works.
    expect(session.adapters.key).toBe(adapterSetKey([use("coding")]));
    expect((await generate(hello, [use("coding")])).text).toBe(before);
    expect((await generate(hello, [use("agent")])).text).toBe("aaaaaaaa");
  });

  it("names a missing adapter file or a base model given as an adapter", async () => {
    await expect(generate(hello, [{ path: join(dir.path, "nope.gguf"), scale: 1 }])).rejects.toThrow(
      /nope\.gguf/,
    );
    await expect(generate(hello, [{ path: fx.basePath, scale: 1 }])).rejects.toThrow(/is not a LoRA adapter/);
    expect((await generate(hello, [use("ui")])).text).toBe("uuuuuuuu");
  });

  it("serializes a switch issued during an evaluation with node-llama-cpp's context lock (no crash)", async () => {
    const switches: Promise<void>[] = [];
    const sets = [[use("coding")], [], [use("chat"), use("ui", 0.5)], [use("chat")]];
    let tokens = 0;
    const result = await session.generate(
      [{ role: "user", text: "a long answer please" }],
      { temperature: 0, maxTokens: 200, adapters: [use("chat")] },
      () => {
        // Fired between and during decodes; each must wait for the batch in flight.
        tokens++;
        if (tokens % 5 === 0)
          switches.push(session.adapters.apply(normalizeAdapters(sets[(tokens / 5) % sets.length])));
      },
      new AbortController().signal,
    );
    await Promise.all(switches);
    expect(result.tokens).toBe(200);
    expect(switches.length).toBeGreaterThan(30);
    // The switches took effect mid-answer, between tokens: other markers appear.
    expect(result.text).toMatch(/\{/);
    expect(result.text.startsWith("ccccc")).toBe(true);
  });
});
