import { describe, expect, it } from "vitest";
import { QueryEmbeddings } from "./query-embeddings";

function counted(fail = () => false) {
  const calls: string[][] = [];
  const embed = (texts: string[]) => {
    calls.push(texts);
    if (fail()) return Promise.reject(new Error("engine restarting"));
    return Promise.resolve(texts.map((t) => [t.length, calls.length]));
  };
  return { calls, embed };
}

describe("QueryEmbeddings", () => {
  it("embeds a text once for concurrent and later askers", async () => {
    const { calls, embed } = counted();
    const memo = new QueryEmbeddings(embed, () => "m");
    const [a, b] = await Promise.all([memo.get("hello"), memo.get("hello")]);
    expect(await memo.get("hello")).toBe(a);
    expect(b).toBe(a);
    expect(calls).toEqual([["hello"]]);
  });

  it("embeds again under another model, after a failure, and after eviction", async () => {
    const { calls, embed } = counted(() => failNext && !(failNext = false));
    let failNext = true;
    let model = "m1";
    const memo = new QueryEmbeddings(embed, () => model, 2);
    await expect(memo.get("a")).rejects.toThrow("engine restarting");
    await memo.get("a"); // retried, not the kept failure
    model = "m2";
    await memo.get("a");
    await memo.get("b");
    await memo.get("c"); // capacity 2: "a" goes
    await memo.get("c");
    await memo.get("a");
    expect(calls).toEqual([["a"], ["a"], ["a"], ["b"], ["c"], ["a"]]);
  });

  it("rejects when the engine answers no vector", async () => {
    const memo = new QueryEmbeddings(
      () => Promise.resolve([]),
      () => "m",
    );
    await expect(memo.get("a")).rejects.toThrow("no embedding");
  });
});
