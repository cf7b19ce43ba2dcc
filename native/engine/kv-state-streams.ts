import { open } from "node:fs/promises";

/**
 * A sequence's saved KV state in a context with another sequence count.
 *
 * node-llama-cpp creates llama.cpp's per-sequence KV cache (one "stream" of cells per
 * sequence), and a sequence's state file (`llama_state_seq_save_file`) is laid out as:
 *
 *     u32 magic, u32 version, u32 n_tokens, n_tokens × i32 tokens,
 *     u32 n_stream, then per stream: u32 cell_count, and when it is not 0 the cells' positions,
 *     sequence ids and keys/values (llama_kv_cache::state_write)
 *
 * Only the sequence's own stream holds cells, so every other stream is a bare 0. llama.cpp
 * refuses a state whose n_stream is not the context's ("n_stream mismatch") and reads a
 * non-empty stream into the target sequence's stream whatever its index
 * (llama_kv_cache::state_read). So the state of a context with k sequences becomes one for m
 * sequences by rewriting n_stream and the empty streams around the one that holds cells: what
 * ModelSession needs when its context grows, or when the engine restarts with another count.
 */

/** LLAMA_STATE_SEQ_MAGIC ('ggsq'). */
const SEQ_MAGIC = 0x67677371;
/** Fields before the tokens: magic, version, n_tokens. */
const HEADER_BYTES = 12;
const U32 = 4;
const CHUNK = 1 << 20;

/** How many streams (sequences of the context it was saved from) a state file has. */
export async function stateStreams(path: string, tokenCount: number): Promise<number> {
  const file = await open(path, "r");
  try {
    const head = await readAt(file, 0, HEADER_BYTES);
    if (head.readUInt32LE(0) !== SEQ_MAGIC) throw new Error("not a sequence state file");
    if (head.readUInt32LE(8) !== tokenCount) throw new Error("token count differs from the sidecar");
    return (await readAt(file, HEADER_BYTES + tokenCount * U32, U32)).readUInt32LE(0);
  } finally {
    await file.close();
  }
}

/**
 * Write to `dest` the state file `src` (of `tokenCount` tokens) laid out for a context of
 * `streams` sequences. Throws when `src` is not laid out as above (e.g. a hybrid model's state,
 * whose recurrent part follows the KV cells): the caller then evaluates instead.
 */
export async function restreamState(
  src: string,
  dest: string,
  tokenCount: number,
  streams: number,
): Promise<void> {
  const at = HEADER_BYTES + tokenCount * U32;
  const from = await stateStreams(src, tokenCount);
  const input = await open(src, "r");
  try {
    const size = (await input.stat()).size;
    if (from < 1 || size < at + U32 * (1 + from)) throw new Error("state file too short for its streams");
    // The empty streams before the one with cells.
    let leading = 0;
    while (leading < from && (await readAt(input, at + U32 * (1 + leading), U32)).readUInt32LE(0) === 0)
      leading++;
    const trailing = leading === from ? 0 : from - 1 - leading;
    const start = at + U32 * (1 + leading);
    const end = size - U32 * trailing;
    if (leading === from) {
      if (size !== start) throw new Error("bytes after the empty streams");
    } else {
      const tail = await readAt(input, end, U32 * trailing);
      if (end <= start || tail.some((byte) => byte !== 0))
        throw new Error("more than one stream holds cells");
    }
    const output = await open(dest, "w", 0o600);
    try {
      let position = 0;
      const write = async (bytes: Buffer): Promise<void> => {
        await output.write(bytes, 0, bytes.length, position);
        position += bytes.length;
      };
      await copy(input, write, 0, at);
      const count = Buffer.alloc(U32);
      count.writeUInt32LE(streams, 0);
      await write(count);
      // The stream with cells first, then the others, empty.
      await copy(input, write, start, end);
      await write(Buffer.alloc(U32 * (leading === from ? streams : streams - 1)));
    } finally {
      await output.close();
    }
  } finally {
    await input.close();
  }
}

type FileHandle = Awaited<ReturnType<typeof open>>;

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  if (bytesRead !== length) throw new Error("state file ends early");
  return buffer;
}

async function copy(
  input: FileHandle,
  write: (bytes: Buffer) => Promise<void>,
  start: number,
  end: number,
): Promise<void> {
  for (let position = start; position < end; position += CHUNK)
    await write(await readAt(input, position, Math.min(CHUNK, end - position)));
}
