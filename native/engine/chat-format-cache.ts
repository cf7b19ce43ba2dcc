import { createHash, randomUUID } from "node:crypto";
import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { withLock } from "lifecycle-utils";
import {
  chatWrappers,
  resolveChatWrapper,
  type ChatHistoryItem,
  type ChatModelFunctions,
  type ChatWrapper,
  type LlamaModel,
} from "node-llama-cpp";
import { z } from "zod";
import { ensurePrivateDir, PRIVATE_FILE_MODE } from "../../common/files/private-files";
import { chooseChatWrapper } from "./chat-wrapper";

/**
 * The chat format each model file resolved to, kept across starts. Resolving it
 * (node-llama-cpp's resolveChatWrapper) renders the model's Jinja template against every
 * specialized wrapper it may match: ~0.4–0.55 s of CPU per load on this machine, the biggest
 * part of a start once the context is small (bench/README.md, "parallel"). The wrapper's type
 * name is kept, per model file (path, size, mtime) and engine build, only when the wrapper made
 * from that name alone lays out a set of probe conversations exactly as the resolved one does:
 * a wrapper resolved with settings a bare one lacks (e.g. a date in its system prompt) is not
 * kept, and is resolved at every load as before.
 */
const CACHE_FILE = "chat-formats.cache";
const FORMAT = 1;
/** Models remembered, the oldest dropped first. */
const MAX_ENTRIES = 64;

const CacheSchema = z.object({
  format: z.literal(FORMAT),
  entries: z.record(z.string(), z.object({ type: z.string(), savedAt: z.number() })),
});
type Cache = z.infer<typeof CacheSchema>;

type WrapperType = keyof typeof chatWrappers;

/**
 * `model`'s chat wrapper (chooseChatWrapper's), from the cache in `dir` when it holds one for
 * `identity` (the model file and engine build); else resolved and, when its type alone makes
 * it, kept there. Never throws for the cache: a folder that cannot be read or written only
 * costs the resolution.
 */
export async function cachedChatWrapper(
  model: LlamaModel,
  dir: string,
  identity: string,
): Promise<ChatWrapper> {
  const file = join(dir, CACHE_FILE);
  const key = createHash("sha256").update(identity).digest("hex");
  const cache = await readCache(file);
  const known = cache.entries[key]?.type;
  if (known !== undefined && Object.hasOwn(chatWrappers, known)) {
    const wrapper = wrapperOfType(model, known as WrapperType);
    if (wrapper) return wrapper;
  }
  const resolved = chooseChatWrapper(model);
  const type = typeOf(resolved);
  const bare = type === null ? null : wrapperOfType(model, type);
  if (type !== null && bare !== null && sameLayout(bare, resolved)) {
    await keep(file, key, type).catch((error: unknown) =>
      process.stderr.write(`[engine] could not keep the chat format: ${(error as Error).message}\n`),
    );
  }
  return resolved;
}

/** The wrapper node-llama-cpp makes for `type` and `model` without resolving, or null. */
function wrapperOfType(model: LlamaModel, type: WrapperType): ChatWrapper | null {
  try {
    return (
      resolveChatWrapper({
        type,
        bosString: model.tokens.bosString,
        filename: model.filename,
        fileInfo: model.fileInfo,
        tokenizer: model.tokenizer,
        warningLogs: false,
        fallbackToOtherWrappersOnJinjaError: false,
      }) ?? null
    );
  } catch {
    return null;
  }
}

/** The type name of `wrapper`'s class among node-llama-cpp's wrappers, or null (ours). */
function typeOf(wrapper: ChatWrapper): WrapperType | null {
  const entry = Object.entries(chatWrappers).find(([, Wrapper]) => wrapper.constructor === Wrapper);
  return entry ? (entry[0] as WrapperType) : null;
}

/** Conversations whose layout tells wrappers apart: system, turns, an answer, functions. */
const PROBES: { history: ChatHistoryItem[]; functions?: ChatModelFunctions }[] = [
  { history: [{ type: "user", text: "Hi" }] },
  {
    history: [
      { type: "system", text: "You are a helpful assistant." },
      { type: "user", text: "What is 2 + 2?" },
      { type: "model", response: ["4"] },
      { type: "user", text: "And 3 + 3?" },
    ],
  },
  {
    history: [
      { type: "system", text: "Use the tools." },
      { type: "user", text: "What time is it in Paris?" },
    ],
    functions: {
      getTime: {
        description: "The time in a city",
        params: { type: "object", properties: { city: { type: "string" } } },
      },
    },
  },
];

/** Whether `a` and `b` lay out the probe conversations in the same text and tokens. */
export function sameLayout(a: ChatWrapper, b: ChatWrapper): boolean {
  const layout = (wrapper: ChatWrapper) =>
    PROBES.map(({ history, functions }) =>
      JSON.stringify(
        wrapper
          .generateContextState({ chatHistory: history, availableFunctions: functions })
          .contextText.toJSON(),
      ),
    );
  try {
    return JSON.stringify(layout(a)) === JSON.stringify(layout(b));
  } catch {
    return false;
  }
}

async function readCache(file: string): Promise<Cache> {
  try {
    return CacheSchema.parse(JSON.parse(await readFile(file, "utf8")));
  } catch {
    return { format: FORMAT, entries: {} };
  }
}

/** Scope of the cache's writes: one at a time per file (each reads the file, adds, writes it). */
const writeScope = {};

/** Add `key` → `type` to the cache as it is on disk then (another load may have written it meanwhile). */
function keep(file: string, key: string, type: string): Promise<void> {
  return withLock([writeScope, file], () => writeEntry(file, key, type));
}

async function writeEntry(file: string, key: string, type: string): Promise<void> {
  const cache = await readCache(file);
  cache.entries[key] = { type, savedAt: Date.now() };
  const kept = Object.entries(cache.entries)
    .sort(([, a], [, b]) => b.savedAt - a.savedAt)
    .slice(0, MAX_ENTRIES);
  await ensurePrivateDir(join(file, ".."));
  // A temp file renamed over: a kill mid-write leaves the old cache (KvStateStore deletes *.tmp).
  const temp = `${file}.${randomUUID()}.tmp`;
  await writeFile(temp, JSON.stringify({ format: FORMAT, entries: Object.fromEntries(kept) }), {
    mode: PRIVATE_FILE_MODE,
  });
  await rename(temp, file);
}
