import { describe, expect, it } from "vitest";
import { SharedLock } from "./shared-lock";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("SharedLock", () => {
  it("runs shared work together, exclusive work alone, in arrival order", async () => {
    const lock = new SharedLock();
    const log: string[] = [];
    const gates = [deferred(), deferred(), deferred()];
    const job = (name: string, gate: { promise: Promise<void> }) => async () => {
      log.push(`${name}+`);
      await gate.promise;
      log.push(`${name}-`);
    };
    const s1 = lock.shared(job("s1", gates[0]!));
    const s2 = lock.shared(job("s2", gates[1]!));
    const x = lock.exclusive(job("x", gates[2]!));
    // Arrives after the exclusive one: waits for it, although only shared work runs now.
    const s3 = lock.shared(() => Promise.resolve(void log.push("s3")));
    await new Promise<void>((r) => setImmediate(r));
    expect(log).toEqual(["s1+", "s2+"]);
    gates[0]!.resolve();
    gates[1]!.resolve();
    await Promise.all([s1, s2]);
    await new Promise<void>((r) => setImmediate(r));
    expect(log).toEqual(["s1+", "s2+", "s1-", "s2-", "x+"]);
    gates[2]!.resolve();
    await Promise.all([x, s3]);
    expect(log).toEqual(["s1+", "s2+", "s1-", "s2-", "x+", "x-", "s3"]);
  });

  it("frees the lock when a job fails", async () => {
    const lock = new SharedLock();
    await expect(lock.exclusive(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(lock.shared(() => Promise.resolve(1))).resolves.toBe(1);
  });
});
