import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { restreamState, stateStreams } from "./kv-state-streams";
import { suiteDir } from "../../testing/core/temp-dir";

// The layout on synthetic files; kv-state.test.ts restores real ones across sequence counts.
const dir = suiteDir("macaron-kv-streams-");

const u32 = (...values: number[]): Buffer => {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => b.writeUInt32LE(v, 4 * i));
  return b;
};
const tokens = [7, 8, 9];
const header = Buffer.concat([u32(0x67677371, 2, tokens.length), u32(...tokens)]);
/** A stream holding cells: its count, then bytes standing for positions and keys/values. */
const cells = Buffer.concat([u32(5), Buffer.from("cells and their keys/values, ending in zeros\0\0\0\0")]);

/** A state of a context with `streams` sequences whose stream `at` holds the cells. */
function state(streams: number, at: number | null): Buffer {
  const parts = [header, u32(streams)];
  for (let s = 0; s < streams; s++) parts.push(s === at ? cells : u32(0));
  return Buffer.concat(parts);
}

async function convert(bytes: Buffer, streams: number, name: string): Promise<Buffer> {
  const src = join(dir.path, `${name}.kv`);
  const dest = join(dir.path, `${name}.out`);
  await writeFile(src, bytes);
  await restreamState(src, dest, tokens.length, streams);
  return readFile(dest);
}

describe("a sequence state for another sequence count", () => {
  it("reads the stream count after the tokens", async () => {
    const path = join(dir.path, "count.kv");
    await writeFile(path, state(4, 2));
    expect(await stateStreams(path, tokens.length)).toBe(4);
    await expect(stateStreams(path, 2)).rejects.toThrow("token count");
  });

  it("keeps the tokens and the cells, with the other streams empty", async () => {
    expect(await convert(state(4, 2), 1, "down")).toEqual(state(1, 0));
    expect(await convert(state(4, 3), 1, "last")).toEqual(state(1, 0));
    expect(await convert(state(1, 0), 4, "up")).toEqual(state(4, 0));
    expect(await convert(state(4, null), 2, "empty")).toEqual(state(2, null));
  });

  it("refuses a file laid out otherwise: two streams with cells, bytes after, another magic", async () => {
    const two = Buffer.concat([header, u32(3), cells, u32(0), cells]);
    await expect(convert(two, 1, "two")).rejects.toThrow("more than one stream");
    await expect(convert(Buffer.concat([state(2, null), u32(1)]), 1, "after")).rejects.toThrow("bytes after");
    const magic = Buffer.from(state(2, 1));
    magic.writeUInt32LE(0x67677366, 0);
    await expect(convert(magic, 1, "magic")).rejects.toThrow("not a sequence state");
    await expect(convert(state(4, 1).subarray(0, header.length + 6), 1, "short")).rejects.toThrow();
  });
});
