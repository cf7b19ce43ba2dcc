import { describe, expect, it } from "vitest";
import { MemoryRouterStore, textHash } from "./store";
import { routerStoreContract } from "../../../testing/contracts/router-store.contract";

routerStoreContract("memory", () => new MemoryRouterStore());

describe("MemoryRouterStore", () => {
  it("hands out copies, so callers cannot change what is stored", () => {
    const store = new MemoryRouterStore();
    const v = Float32Array.from([1, 2]);
    store.putVectors("m", new Map([[textHash("a"), v]]));
    v[0] = 99;
    store
      .getVectors("m", [textHash("a")])
      .get(textHash("a"))
      ?.fill(7);
    expect(Array.from(store.getVectors("m", [textHash("a")]).get(textHash("a")) ?? [])).toEqual([1, 2]);
  });
});
