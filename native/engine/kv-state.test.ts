import { mkdir, readdir, readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { writeFixtures, type FixturePaths } from "../gguf/fixtures";
import { deleteSavedStates, KvStateStore } from "./kv-state-store";
import { loadLlamaBackend, type LlamaBackend } from "./llama-backend";
import { ModelSession } from "./model-session";
import type { ChatTurn, GenerateOptions } from "../../common/engine-protocol";
import { suiteDir } from "../../testing/core/temp-dir";

// Conversations' KV caches kept per session key in the sequences and on disk, with the real
// tiny model: what gets evaluated, and that reused or restored caches answer exactly.
//
// "Exactly" has two references. A state restored from disk holds the very bytes of the cache
// it was saved from, so its answer must equal the answer of a session that kept the
// conversation in memory all along (a "twin" replaying the same turns). A cache reused at all
// (in memory or from disk) evaluates the prompt in other batches than one fresh pass, and float
// sums in another order can flip a greedy choice between near-tied logits (this random tiny
// model has many): so against a fresh evaluation only full evaluations are compared.
const dir = suiteDir("macaron-kv-state-");
let fx: FixturePaths;
let backend: LlamaBackend;
let reference: ModelSession;
const open: ModelSession[] = [];

const system: ChatTurn = { role: "system", text: "You are Macaron, a helpful local assistant." };
const ask = (text: string): ChatTurn => ({ role: "user", text });

/** A session with all `sequences` allocated at load, or, with `grow`, one that grows to them. */
async function session(stateDir: string | undefined, sequences = 4, grow = false): Promise<ModelSession> {
  const s = await ModelSession.open(
    backend,
    fx.basePath,
    { contextSize: 2048, sequences, stateDir, growSequences: grow },
    () => {},
  );
  open.push(s);
  return s;
}

function answer(s: ModelSession, history: ChatTurn[], sessionKey?: string) {
  const options: GenerateOptions = { temperature: 0, maxTokens: 24, sessionKey };
  return s.generate(history, options, () => {}, new AbortController().signal);
}

/** Greedy answer from an empty cache: what a fresh evaluation gives. */
async function fresh(history: ChatTurn[]): Promise<{ text: string; promptTokensEvaluated: number }> {
  await reference.slots.clear();
  return answer(reference, history);
}

/**
 * A conversation of `turns` answered turns on `s` (and the same calls on `twin`, which keeps it
 * in memory); returns the history ending with a new question.
 */
async function converse(
  s: ModelSession,
  key: string,
  turns: number,
  topic: string,
  twin?: ModelSession,
): Promise<ChatTurn[]> {
  let history: ChatTurn[] = [system, ask(`tell me about ${topic}`)];
  for (let i = 0; i < turns; i++) {
    const result = await answer(s, history, key);
    if (twin) expect((await answer(twin, history, key)).text).toBe(result.text);
    history = [
      ...history,
      { role: "assistant", text: result.text },
      ask(`${topic}: and then, part ${i + 2}?`),
    ];
  }
  return history;
}

/** A session without a state folder that only ever holds one conversation, in memory. */
const twinSession = () => session(undefined, 1);

const tokenCount = (s: ModelSession, history: ChatTurn[]) => s.model.tokenize(JSON.stringify(history)).length;

/**
 * What a continued turn evaluates at most: the previous answer's last token (sampled, never
 * decoded), the ChatML markers around the new user turn, and its text.
 */
const newTurnBound = (s: ModelSession, history: ChatTurn[]) =>
  1 +
  s.model.tokenize(
    `<|im_end|>\n<|im_start|>user\n${history.at(-1)!.text}<|im_end|>\n<|im_start|>assistant\n`,
    true,
  ).length;

beforeAll(async () => {
  fx = await writeFixtures(dir.path);
  backend = await loadLlamaBackend(1);
  reference = await ModelSession.open(backend, fx.basePath, { contextSize: 2048, sequences: 1 }, () => {});
});

afterEach(async () => {
  for (const s of open.splice(0)) await s.dispose();
});

afterAll(async () => {
  await reference?.dispose();
});

describe("KV cache per conversation (session key)", () => {
  it("a conversation continued turn after turn evaluates only the new tokens", async () => {
    const s = await session(undefined);
    let history: ChatTurn[] = [system, ask("hello, who are you?")];
    const first = await answer(s, history, "a");
    expect(first.promptTokensEvaluated).toBe((await fresh(history)).promptTokensEvaluated);
    let previous = first.text;
    for (let i = 0; i < 4; i++) {
      history = [...history, { role: "assistant", text: previous }, ask(`question ${i}`)];
      const result = await answer(s, history, "a");
      // The new user turn plus the chat template's markers around it, not the history.
      expect(result.promptTokensEvaluated).toBeLessThanOrEqual(newTurnBound(s, history));
      previous = result.text;
    }
    expect(first.promptTokensEvaluated).toBeGreaterThan(40);
    expect(tokenCount(s, history)).toBeGreaterThan(200);
  });

  it("counts exactly the prompt tokens it evaluates", async () => {
    const s = await session(undefined);
    const history: ChatTurn[] = [system, ask("count me")];
    const full = (await answer(s, history, "a")).promptTokensEvaluated;
    const chatml = `<|im_start|>system\n${system.text}<|im_end|>\n<|im_start|>user\ncount me<|im_end|>\n<|im_start|>assistant\n`;
    // The ChatML wrapper starts the context with the BOS token.
    const bos = s.model.tokens.bos === null ? 0 : 1;
    expect(full).toBe(s.model.tokenize(chatml, true).length + bos);
    // The same prompt again: all cached, but one token is decoded again to get logits.
    expect((await answer(s, history, "a")).promptTokensEvaluated).toBe(1);
  });

  it("alternating between two conversations keeps both caches in their own sequences", async () => {
    const s = await session(undefined);
    const twins = { a: await twinSession(), b: await twinSession() };
    let a: ChatTurn[] = [system, ask("tell me about cats")];
    let b: ChatTurn[] = [system, ask("tell me about boats")];
    const evaluated: { count: number; bound: number }[] = [];
    for (let i = 0; i < 3; i++) {
      for (const [key, history] of [
        ["a", a],
        ["b", b],
      ] as const) {
        const result = await answer(s, history, key);
        if (i > 0) evaluated.push({ count: result.promptTokensEvaluated, bound: newTurnBound(s, history) });
        // Nothing of the other conversation leaks in: the same answer as a session holding only this one.
        expect(result.text).toBe((await answer(twins[key], history, key)).text);
        const next = [...history, { role: "assistant" as const, text: result.text }, ask(`${key} more ${i}`)];
        if (key === "a") a = next;
        else b = next;
      }
    }
    for (const { count, bound } of evaluated) expect(count).toBeLessThanOrEqual(bound);
    expect(s.slots.size).toBe(2);
  });
});

describe("KV states saved to disk", () => {
  it("after unload, a new session on the same folder evaluates only the new turn, exactly", async () => {
    const stateDir = join(dir.path, "kv-reopen");
    const first = await session(stateDir);
    const twin = await twinSession();
    const history = await converse(first, "conv-a", 3, "cats", twin);
    await first.dispose();
    open.splice(open.indexOf(first), 1);

    const second = await session(stateDir);
    const reopened = await answer(second, history, "conv-a");
    expect(second.states?.stats.restored).toBe(1);
    expect(reopened.promptTokensEvaluated).toBeLessThanOrEqual(newTurnBound(second, history));
    expect((await fresh(history)).promptTokensEvaluated).toBeGreaterThan(150);
    expect(reopened.text).toBe((await answer(twin, history, "conv-a")).text);
  });

  it("is saved after each answer, so a process that dies right after still has it", async () => {
    const stateDir = join(dir.path, "kv-each");
    const s = await session(stateDir);
    await converse(s, "conv-b", 1, "boats");
    // No dispose: each answer's state is written in the background right after it.
    await answer(s, [system, ask("other")], "conv-c");
    await vi.waitFor(async () => {
      const names = await readdir(stateDir);
      expect(names.filter((n) => n.endsWith(".json"))).toHaveLength(2);
      expect(names.filter((n) => n.endsWith(".kv"))).toHaveLength(2);
      expect(names.some((n) => n.endsWith(".tmp"))).toBe(false);
    });
  });

  it("an evicted conversation comes back from disk instead of being evaluated again", async () => {
    const s = await session(join(dir.path, "kv-evict"), 1);
    const twins = { a: await twinSession(), b: await twinSession() };
    const a = await converse(s, "a", 2, "cats", twins.a);
    const b = await converse(s, "b", 1, "boats", twins.b);
    const result = await answer(s, a, "a");
    expect(s.states?.stats.restored).toBe(1);
    expect(result.promptTokensEvaluated).toBeLessThanOrEqual(newTurnBound(s, a));
    expect(result.text).toBe((await answer(twins.a, a, "a")).text);
    expect((await answer(s, b, "b")).text).toBe((await answer(twins.b, b, "b")).text);
    expect(s.states?.stats.restored).toBe(2);
  });

  it("a context that grows gets its sequences when a second conversation comes, and restores the first one's state", async () => {
    const s = await session(join(dir.path, "kv-grow"), 4, true);
    expect(s.context.totalSequences).toBe(1);
    expect(s.info.settings?.sequences).toBe(4);
    const small = s.context;
    const twins = { a: await twinSession(), b: await twinSession() };
    const a = await converse(s, "a", 2, "cats", twins.a);
    expect(s.context).toBe(small);
    // b finds the one sequence holding a: it evicts a there, and the context grows beside it.
    const b = await converse(s, "b", 1, "boats", twins.b);
    await s.settled();
    expect(s.context.totalSequences).toBe(4);
    expect(small.disposed).toBe(true);
    // a's state was saved from the one-sequence context and is read into the four-sequence one.
    const result = await answer(s, a, "a");
    expect(s.states?.stats.restored).toBe(1);
    expect(result.promptTokensEvaluated).toBeLessThanOrEqual(newTurnBound(s, a));
    expect(result.text).toBe((await answer(twins.a, a, "a")).text);
    expect((await answer(s, b, "b")).text).toBe((await answer(twins.b, b, "b")).text);
  });

  it("a state saved with four sequences is restored into a restarted context of one, exactly", async () => {
    const stateDir = join(dir.path, "kv-restart-small");
    const first = await session(stateDir, 4);
    const twin = await twinSession();
    const history = await converse(first, "conv-r", 2, "rivers", twin);
    await first.dispose();
    open.splice(open.indexOf(first), 1);
    const second = await session(stateDir, 4, true);
    expect(second.context.totalSequences).toBe(1);
    const reopened = await answer(second, history, "conv-r");
    expect(second.states?.stats).toMatchObject({ restored: 1, rejected: 0 });
    expect(reopened.promptTokensEvaluated).toBeLessThanOrEqual(newTurnBound(second, history));
    expect(reopened.text).toBe((await answer(twin, history, "conv-r")).text);
    // The converted copy is gone: only the conversation's own files are left.
    expect((await readdir(stateDir)).some((n) => n.endsWith(".tmp"))).toBe(false);
  });

  it("two turns of one conversation at once both restore its state saved with another sequence count", async () => {
    const stateDir = join(dir.path, "kv-restore-twice");
    const first = await session(stateDir, 1);
    const history = await converse(first, "conv-t", 1, "tides");
    await first.dispose();
    open.splice(open.indexOf(first), 1);
    const second = await session(stateDir, 4);
    // Each converts the file into a copy of its own (they once shared one name).
    const [x, y] = await Promise.all([answer(second, history, "conv-t"), answer(second, history, "conv-t")]);
    expect(x.text).toBe(y.text);
    expect(second.states?.stats).toMatchObject({ restored: 2, rejected: 0 });
    expect(Math.max(x.promptTokensEvaluated, y.promptTokensEvaluated)).toBeLessThanOrEqual(
      newTurnBound(second, history),
    );
    await second.dispose();
    open.splice(open.indexOf(second), 1);
    expect((await readdir(stateDir)).some((n) => n.endsWith(".tmp"))).toBe(false);
  });

  it("a damaged state file is ignored and deleted: full evaluation, correct answer", async () => {
    const stateDir = join(dir.path, "kv-damaged");
    const first = await session(stateDir);
    const history = await converse(first, "conv-d", 2, "trees");
    await first.dispose();
    open.splice(open.indexOf(first), 1);
    const kv = (await readdir(stateDir)).find((n) => n.endsWith(".kv"))!;
    const bytes = await readFile(join(stateDir, kv));
    // Flip bytes deep inside the KV data, where llama.cpp's own header checks cannot see it.
    for (let i = Math.floor(bytes.length * 0.6); i < bytes.length * 0.6 + 64; i++)
      bytes[i] = bytes[i]! ^ 0xff;
    await writeFile(join(stateDir, kv), bytes);

    const second = await session(stateDir);
    const result = await answer(second, history, "conv-d");
    const expected = await fresh(history);
    expect(second.states?.stats).toMatchObject({ restored: 0, rejected: 1 });
    expect(result.promptTokensEvaluated).toBe(expected.promptTokensEvaluated);
    expect(result.text).toBe(expected.text);
  });

  it("a state from another model file (or a garbage sidecar) is not used and is deleted", async () => {
    const stateDir = join(dir.path, "kv-mismatch");
    const first = await session(stateDir);
    const history = await converse(first, "conv-e", 1, "rivers");
    const other = await converse(first, "conv-f", 1, "hills");
    await first.dispose();
    open.splice(open.indexOf(first), 1);
    // The same path now holds "another" model (mtime changed); one sidecar is garbage anyway.
    const later = new Date(Date.now() + 5000);
    await utimes(fx.basePath, later, later);
    const sidecar = (await readdir(stateDir)).find((n) => n.endsWith(".json"))!;
    await writeFile(join(stateDir, sidecar), "{not json");

    const second = await session(stateDir);
    for (const [key, h] of [
      ["conv-e", history],
      ["conv-f", other],
    ] as const) {
      const result = await answer(second, h, key);
      const expected = await fresh(h);
      expect(result.promptTokensEvaluated).toBe(expected.promptTokensEvaluated);
      expect(result.text).toBe(expected.text);
    }
    expect(second.states?.stats).toMatchObject({ restored: 0, rejected: 2 });
    // Both files were deleted and replaced by the states saved after these answers.
    await second.dispose();
    open.splice(open.indexOf(second), 1);
    const sidecars = (await readdir(stateDir)).filter((n) => n.endsWith(".json"));
    const sessions = await Promise.all(
      sidecars.map(
        async (n) =>
          (JSON.parse(await readFile(join(stateDir, n), "utf8")) as { sessionKey: string }).sessionKey,
      ),
    );
    expect(sessions.sort()).toEqual(["conv-e", "conv-f"]);
  });
});

describe("KvStateStore folder", () => {
  it("deletes crash leftovers and keeps at most maxFiles states, least recently used first", async () => {
    const stateDir = join(dir.path, "kv-caps");
    const s = await session(undefined);
    for (const key of ["x", "y", "z"]) await answer(s, [system, ask(`hi ${key}`)], key);
    const [sx, sy, sz] = s.slots.all;
    await mkdir(stateDir, { recursive: true });
    await writeFile(join(stateDir, "0123.kv.tmp"), "partial");
    await writeFile(join(stateDir, "4567.kv"), "no sidecar");
    const store = new KvStateStore(stateDir, await KvStateStore.identify(fx.basePath, "test"), {
      maxFiles: 2,
    });
    expect(await store.save(sx!.sequence, "x", "", [])).toBe(true);
    expect(await store.save(sy!.sequence, "y", "", [])).toBe(true);
    // x is read back (used) after y was saved, so y is now the least recently used.
    const past = new Date(Date.now() - 60_000);
    const names = await readdir(stateDir);
    expect(names).toHaveLength(4);
    const candidateX = await store.find("x", "", []);
    expect(candidateX?.tokens.length).toBe(sx!.sequence.contextTokens.length);
    for (const n of names) {
      const sidecar = JSON.parse(n.endsWith(".json") ? await readFile(join(stateDir, n), "utf8") : "{}") as {
        sessionKey?: string;
      };
      if (sidecar.sessionKey === "y") await utimes(join(stateDir, n), past, past);
    }
    expect(await store.save(sz!.sequence, "z", "", [])).toBe(true);
    expect(await store.find("y", "", [])).toBeNull();
    expect(await store.find("x", "", [])).not.toBeNull();
    expect(await store.find("z", "", [])).not.toBeNull();
    const left = await readdir(stateDir);
    expect(left.filter((n) => n.endsWith(".tmp") || n.startsWith("4567"))).toEqual([]);
    expect(left).toHaveLength(4);
  });
});

describe("deleteSavedStates", () => {
  it("removes only the given conversation's files", async () => {
    const stateDir = join(dir.path, "kv-delete");
    const s = await session(stateDir);
    await converse(s, "keep", 1, "cats");
    await converse(s, "drop", 1, "dogs");
    await s.dispose();
    open.splice(open.indexOf(s), 1);
    expect(await deleteSavedStates(stateDir, "drop")).toBe(1);
    // The kept conversation's sidecar and state, and the model's chat format (chat-format-cache.ts).
    expect((await readdir(stateDir)).map((n) => n.split(".").at(-1)).sort()).toEqual(["cache", "json", "kv"]);
    expect(await deleteSavedStates(join(dir.path, "no-such-folder"), "drop")).toBe(0);
  });
});

describe("forget (a conversation was deleted)", () => {
  it("empties its live cache and is not saved again on unload", async () => {
    const stateDir = join(dir.path, "kv-forget");
    const s = await session(stateDir);
    const kept = await converse(s, "keep", 1, "cats");
    const dropped = await converse(s, "drop", 1, "dogs");
    await s.forget("drop");
    expect(await deleteSavedStates(stateDir, "drop")).toBe(1);
    // The forgotten conversation starts from an empty cache: its whole prompt is evaluated.
    const again = await answer(s, dropped, "drop");
    expect(again.promptTokensEvaluated).toBeGreaterThan(newTurnBound(s, dropped));
    // What the engine's "forget" request does: live caches first, then the saved files.
    await s.forget("drop");
    await deleteSavedStates(stateDir, "drop");
    await s.dispose(); // saves the live caches: "drop" must not come back
    open.splice(open.indexOf(s), 1);
    const sidecars = await Promise.all(
      (await readdir(stateDir))
        .filter((n) => n.endsWith(".json"))
        .map(
          async (n) =>
            (JSON.parse(await readFile(join(stateDir, n), "utf8")) as { sessionKey: string }).sessionKey,
        ),
    );
    expect(sidecars).toContain("keep");
    expect(sidecars).not.toContain("drop");
    expect(kept.length).toBeGreaterThan(0);
  });
});

describe("KvStateStore replacing a state", () => {
  it("keeps a complete state described at every step: a kill between the steps loses nothing", async () => {
    const stateDir = join(dir.path, "kv-replace");
    const s = await session(undefined);
    const history = [system, ask("hello there")];
    await answer(s, history, "r");
    const [slot] = s.slots.all;
    const identity = await KvStateStore.identify(fx.basePath, "test");
    const store = new KvStateStore(stateDir, identity);
    expect(await store.save(slot!.sequence, "r", "", [])).toBe(true);
    const first = await readdir(stateDir);
    expect(first.filter((n) => n.endsWith(".json"))).toHaveLength(1);
    // A kill after the next state file was written but before its sidecar replaced the old one:
    // the new file is an orphan, the old pair is still whole.
    const [sidecarName] = first.filter((n) => n.endsWith(".json"));
    const base = sidecarName!.slice(0, -5);
    await writeFile(join(stateDir, `${base}.0123456789abcdef.kv`), "written, never described");
    const reopened = new KvStateStore(stateDir, identity);
    const candidate = await reopened.find("r", "", []);
    expect(candidate?.tokens).toEqual([...slot!.sequence.contextTokens]);
    expect((await readdir(stateDir)).sort()).toEqual(first.sort());
    // Saving again replaces the pair: one sidecar, one state file, the new one.
    await answer(s, [...history, { role: "assistant", text: "hi" }, ask("more")], "r");
    expect(await reopened.save(slot!.sequence, "r", "", [])).toBe(true);
    const after = await readdir(stateDir);
    expect(after.filter((n) => n.endsWith(".json"))).toEqual([sidecarName]);
    expect(after.filter((n) => n.endsWith(".kv"))).toHaveLength(1);
    expect((await reopened.find("r", "", []))?.tokens).toEqual([...slot!.sequence.contextTokens]);
  });
});
