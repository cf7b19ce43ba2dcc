import { describe, expect, it } from "vitest";
import { textHash, type LearnedExample, type RouterStore } from "../../electron/core/router/store";

/**
 * The behaviour every RouterStore must have. Run it against each implementation (memory here,
 * SQLite in the DB layer): `routerStoreContract("SQLite", () => openStoreInTempDb())`.
 */
export function routerStoreContract(name: string, makeStore: () => RouterStore): void {
  const example = (text: string, adapterId: string, createdAt: number): LearnedExample => ({
    textHash: textHash(text),
    text,
    adapterId,
    createdAt,
  });

  describe(`RouterStore contract: ${name}`, () => {
    it("caches vectors per model key and text hash, exactly as float32", () => {
      const store = makeStore();
      const v = Float32Array.from([0.1, -2.5, 1 / 3]);
      store.putVectors("model-a", new Map([[textHash("hi"), v]]));
      const hits = store.getVectors("model-a", [textHash("hi"), textHash("other")]);
      expect([...hits.keys()]).toEqual([textHash("hi")]);
      expect(Array.from(hits.get(textHash("hi")) ?? [])).toEqual(Array.from(v));
      expect(store.getVectors("model-b", [textHash("hi")]).size).toBe(0);
      // Replacing a vector keeps one entry.
      store.putVectors("model-a", new Map([[textHash("hi"), Float32Array.from([1, 2, 3])]]));
      expect(Array.from(store.getVectors("model-a", [textHash("hi")]).get(textHash("hi")) ?? [])).toEqual([
        1, 2, 3,
      ]);
    });

    it("lists learned examples oldest first and keeps the newest N per adapter", () => {
      const store = makeStore();
      store.addLearned(example("c1", "coding", 1), 2);
      store.addLearned(example("u1", "ui", 2), 2);
      store.addLearned(example("c2", "coding", 3), 2);
      store.addLearned(example("c3", "coding", 4), 2);
      expect(store.listLearned().map((e) => e.text)).toEqual(["u1", "c2", "c3"]);
      expect(store.listLearned()[0]).toEqual(example("u1", "ui", 2));
    });

    it("relabels a text: the newest label replaces the older one", () => {
      const store = makeStore();
      store.addLearned(example("same text", "coding", 1), 5);
      store.addLearned(example("same text", "ui", 2), 5);
      expect(store.listLearned()).toEqual([example("same text", "ui", 2)]);
    });
  });
}
