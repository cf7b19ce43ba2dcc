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
  type Llama,
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
 * kept, and is resolved at every load as before. A load that finds none kept resolves it beside
 * the load, on the file's vocabulary (pendingChatFormat).
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

/** The chat format of a model being loaded, worked out beside its load (pendingChatFormat). */
export interface PendingChatFormat {
  /** The wrapper for the model once it is loaded (the same file). */
  wrapperFor(model: LlamaModel): Promise<ChatWrapper>;
  /** Settles once the work beside the load is over (its vocabulary-only model freed). */
  readonly done: Promise<void>;
}

/**
 * Start working out the chat format of the model file `path` while the model loads. The type
 * kept in the cache (`cache`: its folder, and the identity of the model file and engine build)
 * is read at once; without one, once `loadUnderWay` (the weights are being read by llama.cpp's
 * threads), the file's vocabulary alone is loaded (a few MB, `vocabOnly`) and the format resolved on it, on
 * this thread, while the load goes on: the resolution needs only the template, the metadata and
 * the tokenizer, which the vocabulary-only model has as the full one does. `wrapperFor` then
 * makes the wrapper of that type for the loaded model; a format that only a resolution makes
 * (its type alone lays out otherwise), or a failure beside the load, is resolved on the loaded
 * model as before. Never throws.
 */
export function pendingChatFormat(
  llama: Llama,
  path: string,
  options: { cache: { dir: string; identity: string } | null; loadUnderWay: Promise<void> },
): PendingChatFormat {
  const place = options.cache ? cachePlace(options.cache.dir, options.cache.identity) : null;
  const early = (async (): Promise<Found | null> => {
    const known = place ? await knownType(place) : null;
    if (known !== null) return { type: known, kept: true };
    await options.loadUnderWay;
    const type = await typeFromVocabulary(llama, path);
    return type === null ? null : { type, kept: false };
  })().catch(() => null);
  return {
    done: early.then(() => undefined),
    wrapperFor: async (model) => wrapperFrom(model, await early, place),
  };
}

/** A wrapper type found before the model was in: kept in the cache, or resolved beside the load. */
interface Found {
  type: WrapperType;
  kept: boolean;
}

/** Where a model's format is kept: the cache file and the model's key in it. */
interface CachePlace {
  file: string;
  key: string;
}

function cachePlace(dir: string, identity: string): CachePlace {
  return { file: join(dir, CACHE_FILE), key: createHash("sha256").update(identity).digest("hex") };
}

/** The type kept at `place`, or null (none, a garbage file, a name node-llama-cpp lacks). */
async function knownType(place: CachePlace | null): Promise<WrapperType | null> {
  if (!place) return null;
  const type = (await readCache(place.file)).entries[place.key]?.type;
  return type !== undefined && Object.hasOwn(chatWrappers, type) ? (type as WrapperType) : null;
}

/**
 * The wrapper of `found`'s type for `model` (kept at `place` if it was not yet), or, when there
 * is none or it makes none, the one resolved on `model` (kept when its type alone makes it).
 */
async function wrapperFrom(
  model: LlamaModel,
  found: Found | null,
  place: CachePlace | null,
): Promise<ChatWrapper> {
  const made = found ? wrapperOfType(model, found.type) : null;
  if (found && made) {
    if (!found.kept && place) await keepQuietly(place, found.type);
    return made;
  }
  const { wrapper, type } = resolveChatFormat(model);
  if (type !== null && place) await keepQuietly(place, type);
  return wrapper;
}

/**
 * `model`'s wrapper as chooseChatWrapper resolves it, and its type when the wrapper made from
 * that type alone lays out the probe conversations exactly as the resolved one (then the type
 * can be kept and the wrapper made again from it), else null.
 */
function resolveChatFormat(model: LlamaModel): { wrapper: ChatWrapper; type: WrapperType | null } {
  const wrapper = chooseChatWrapper(model);
  const type = typeOf(wrapper);
  const bare = type === null ? null : wrapperOfType(model, type);
  return { wrapper, type: bare !== null && sameLayout(bare, wrapper) ? type : null };
}

/**
 * The format's type resolved on the vocabulary of the model file at `path` (null: none that
 * its type alone makes; the wrapper is then resolved on the loaded model). The vocabulary-only
 * model is freed before it returns.
 */
async function typeFromVocabulary(llama: Llama, path: string): Promise<WrapperType | null> {
  const vocabulary = await llama.loadModel({ modelPath: path, vocabOnly: true, gpuLayers: 0 });
  try {
    return resolveChatFormat(vocabulary).type;
  } finally {
    await vocabulary.dispose();
  }
}

async function keepQuietly(place: CachePlace, type: WrapperType): Promise<void> {
  await keep(place.file, place.key, type).catch((error: unknown) =>
    process.stderr.write(`[engine] could not keep the chat format: ${(error as Error).message}\n`),
  );
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
