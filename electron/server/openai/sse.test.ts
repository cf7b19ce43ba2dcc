import { describe, expect, it } from "vitest";
import { withBatchedDeltas } from "./sse";

/** A generation whose pieces the test pushes, then ends (or fails). */
function scripted() {
  let push!: (text: string) => void;
  let end!: (value: string) => void;
  let fail!: (error: Error) => void;
  let began!: () => void;
  const started = new Promise<void>((r) => (began = r));
  const generate = (onToken: (text: string) => void) =>
    new Promise<string>((resolve, reject) => {
      push = onToken;
      end = resolve;
      fail = reject;
      began();
    });
  return {
    generate,
    started,
    push: (t: string) => push(t),
    end: (v: string) => end(v),
    fail: (e: Error) => fail(e),
  };
}

describe("withBatchedDeltas", () => {
  it("writes the first piece at once, merges the next ones, and writes them before it resolves", async () => {
    const written: string[] = [];
    const g = scripted();
    const done = withBatchedDeltas((t) => written.push(t), g.generate, 60_000);
    await g.started;
    g.push("Hel");
    g.push("lo");
    g.push("!");
    expect(written).toEqual(["Hel"]);
    g.end("result");
    await expect(done).resolves.toBe("result");
    // One event for the merged pieces, before whatever the caller writes next (final chunk).
    expect(written).toEqual(["Hel", "lo!"]);
  });

  it("writes what is pending before it rejects, so the error event comes after the text", async () => {
    const written: string[] = [];
    const g = scripted();
    const done = withBatchedDeltas((t) => written.push(t), g.generate, 60_000);
    await g.started;
    g.push("a");
    g.push("b");
    g.fail(new Error("crashed"));
    await expect(done).rejects.toThrow("crashed");
    expect(written).toEqual(["a", "b"]);
  });

  it("with a window of 0 writes each piece as it comes", async () => {
    const written: string[] = [];
    const g = scripted();
    const done = withBatchedDeltas((t) => written.push(t), g.generate, 0);
    await g.started;
    g.push("a");
    g.push("b");
    expect(written).toEqual(["a", "b"]);
    g.end("");
    await done;
  });
});
