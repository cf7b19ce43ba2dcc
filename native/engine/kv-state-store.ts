import { createHash, randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { readdir, readFile, rename, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { withLock } from "lifecycle-utils";
import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { ensurePrivateDir, makePrivate, PRIVATE_FILE_MODE } from "../../common/files/private-files";
import { z } from "zod";
import { restreamState, stateStreams } from "./kv-state-streams";

/** Bump when the sidecar or the meaning of a saved state changes: older files are then deleted. */
export const KV_STATE_FORMAT = 2;

export interface KvStateLimits {
  /** A state bigger than this is not kept (default 512 MiB). */
  maxFileBytes: number;
  /** Saved states kept in the folder, least recently used deleted first (default 20). */
  maxFiles: number;
  /** Total bytes of the saved states (default 2 GiB). */
  maxTotalBytes: number;
}

export const DEFAULT_KV_STATE_LIMITS: KvStateLimits = {
  maxFileBytes: 512 * 1024 ** 2,
  maxFiles: 20,
  maxTotalBytes: 2 * 1024 ** 3,
};

/**
 * What a saved state was computed with. A state restored under anything else would be wrong
 * (or, with another model, crash llama.cpp): every field must match to reuse a file.
 */
export interface KvStateIdentity {
  modelPath: string;
  modelSize: number;
  modelMtimeMs: number;
  /** node-llama-cpp / llama.cpp build and backend ("cpu", "cuda"…): the KV layout may differ. */
  engine: string;
}

const SidecarSchema = z.object({
  format: z.literal(KV_STATE_FORMAT),
  sessionKey: z.string(),
  identity: z.object({
    modelPath: z.string(),
    modelSize: z.number(),
    modelMtimeMs: z.number(),
    engine: z.string(),
  }),
  adapterSetKey: z.string(),
  /** size+mtime of each adapter file: an adapter replaced in place makes the state stale. */
  adapterFiles: z.array(z.object({ path: z.string(), size: z.number(), mtimeMs: z.number() })),
  tokens: z.array(z.number().int().nonnegative()),
  /** The state file beside the sidecar: `<base>.<first 16 hex of its sha256>.kv`. */
  kvFile: z.string().regex(/^[0-9a-f]{64}\.[0-9a-f]{16}\.kv$/),
  kvBytes: z.number().int().positive(),
  kvSha256: z.string().regex(/^[0-9a-f]{64}$/),
  savedAt: z.number(),
});
type Sidecar = z.infer<typeof SidecarSchema>;

/** Counters for tests and benchmarks. */
export interface KvStateStats {
  saved: number;
  restored: number;
  /** Files found unusable (corrupt, other model or adapters, unrelated prompt) and deleted. */
  rejected: number;
}

/** A saved state that fits the model and adapters; `tokens` tells how much of a prompt it covers. */
export interface KvStateCandidate {
  readonly tokens: readonly number[];
  readonly sidecar: Sidecar;
  readonly base: string;
}

/**
 * Sequence KV states on disk, one per (conversation, adapter set) of a model, so that a
 * conversation reopened after its sequence was evicted, the model reloaded or the engine
 * restarted (even after kill -9) evaluates only its new tokens.
 *
 * `<base>.json` (base = sha256(sessionKey, model, set)) says what the state was computed with,
 * its tokens, and which `<base>.<sha>.kv` (node-llama-cpp's `saveStateToFile` output) holds it.
 * A new state is written under its own name first, then the sidecar is replaced by rename, then
 * the old state file is deleted: once saved, a conversation always has a sidecar describing a
 * complete file, even at the instant of a kill -9. A state file no sidecar names (a crash while
 * saving) is deleted; a damaged or mismatched one is too — llama.cpp trusts a state file
 * blindly (node-llama-cpp: "using this function with another model may crash the process").
 *
 * Not safe for concurrent use: the caller (ModelSession) runs one operation at a time.
 */
export class KvStateStore {
  readonly stats: KvStateStats = { saved: 0, restored: 0, rejected: 0 };
  private readonly limits: KvStateLimits;
  private prepared: Promise<void> | null = null;

  constructor(
    readonly dir: string,
    private readonly identity: KvStateIdentity,
    limits: Partial<KvStateLimits> = {},
    private readonly log: (message: string) => void = (m) => process.stderr.write(`[engine] ${m}\n`),
  ) {
    this.limits = { ...DEFAULT_KV_STATE_LIMITS, ...limits };
  }

  /** The identity of `modelPath` as it is on disk now. */
  static async identify(modelPath: string, engine: string): Promise<KvStateIdentity> {
    const info = await stat(modelPath);
    return { modelPath, modelSize: info.size, modelMtimeMs: info.mtimeMs, engine };
  }

  /**
   * Save `sequence`'s state as the one of (sessionKey, set). Never throws: a state that cannot
   * be saved only costs a re-evaluation later.
   */
  async save(
    sequence: LlamaContextSequence,
    sessionKey: string,
    adapterSetKey: string,
    adapterPaths: readonly string[],
  ): Promise<boolean> {
    const tokens = [...sequence.contextTokens];
    if (tokens.length === 0) return false;
    const base = this.baseName(sessionKey, adapterSetKey);
    // One save of a conversation's state at a time: two of its turns may end at once, and each
    // save replaces the sidecar and deletes the base's other state files.
    return await withLock([this, base], () =>
      this.write(sequence, tokens, base, sessionKey, adapterSetKey, adapterPaths),
    );
  }

  private async write(
    sequence: LlamaContextSequence,
    tokens: Token[],
    base: string,
    sessionKey: string,
    adapterSetKey: string,
    adapterPaths: readonly string[],
  ): Promise<boolean> {
    const kvTemp = this.tempPath(base);
    let kvFile: string | null = null;
    try {
      await this.prepare();
      const adapterFiles = await fileStamps(adapterPaths);
      const { fileSize } = await sequence.saveStateToFile(kvTemp);
      // llama.cpp writes it 0644: a conversation's state is as private as its text.
      await makePrivate(kvTemp);
      if (fileSize > this.limits.maxFileBytes) {
        await remove(kvTemp);
        return false;
      }
      const kvSha256 = await sha256File(kvTemp);
      kvFile = `${base}.${kvSha256.slice(0, 16)}.kv`;
      await rename(kvTemp, join(this.dir, kvFile));
      const sidecar: Sidecar = {
        format: KV_STATE_FORMAT,
        sessionKey,
        identity: this.identity,
        adapterSetKey,
        adapterFiles,
        tokens,
        kvFile,
        kvBytes: fileSize,
        kvSha256,
        savedAt: Date.now(),
      };
      const sidecarTemp = `${this.sidecarPath(base)}.tmp`;
      await writeFile(sidecarTemp, JSON.stringify(sidecar), { mode: PRIVATE_FILE_MODE });
      await makePrivate(sidecarTemp);
      await rename(sidecarTemp, this.sidecarPath(base));
      await removeStateFiles(this.dir, base, kvFile);
      this.stats.saved++;
      await this.prune();
      return true;
    } catch (error) {
      this.log(`could not save a conversation's KV cache: ${(error as Error).message}`);
      await remove(kvTemp);
      return false;
    }
  }

  /**
   * The saved state of (sessionKey, set) if there is one computed with this model and these
   * adapter files; a mismatched or unreadable one is deleted. Never throws.
   */
  async find(
    sessionKey: string,
    adapterSetKey: string,
    adapterPaths: readonly string[],
  ): Promise<KvStateCandidate | null> {
    const base = this.baseName(sessionKey, adapterSetKey);
    let raw: string;
    try {
      await this.prepare();
      raw = await readFile(this.sidecarPath(base), "utf8");
    } catch {
      return null; // none saved (the usual case for a new conversation)
    }
    try {
      const sidecar = SidecarSchema.parse(JSON.parse(raw));
      const fits =
        sidecar.sessionKey === sessionKey &&
        sidecar.adapterSetKey === adapterSetKey &&
        sameIdentity(sidecar.identity, this.identity) &&
        JSON.stringify(sidecar.adapterFiles) === JSON.stringify(await fileStamps(adapterPaths));
      if (fits) return { tokens: sidecar.tokens, sidecar, base };
    } catch {
      // Unparsable sidecar: deleted below.
    }
    await this.reject(base);
    return null;
  }

  /**
   * Load `candidate` into the empty `sequence` after checking the file against its sidecar.
   * Returns the tokens restored; 0 (file deleted, sequence left empty) when it is unusable.
   */
  async restore(sequence: LlamaContextSequence, candidate: KvStateCandidate): Promise<number> {
    const { sidecar, base } = candidate;
    const kvPath = join(this.dir, sidecar.kvFile);
    try {
      if (sidecar.tokens.length > sequence.contextSize) throw new Error("state larger than the context");
      const info = await stat(kvPath);
      if (info.size !== sidecar.kvBytes || (await sha256File(kvPath)) !== sidecar.kvSha256)
        throw new Error("state file damaged");
      // Saved from a context with another sequence count (see kv-state-streams.ts).
      const streams = sequence.context.totalSequences;
      if ((await stateStreams(kvPath, sidecar.tokens.length)) === streams)
        await sequence.loadStateFromFile(kvPath, { acceptRisk: true });
      else {
        const converted = this.tempPath(base);
        try {
          await restreamState(kvPath, converted, sidecar.tokens.length, streams);
          await sequence.loadStateFromFile(converted, { acceptRisk: true });
        } finally {
          await remove(converted);
        }
      }
      const loaded = sequence.contextTokens;
      if (loaded.length !== sidecar.tokens.length || loaded.some((t, i) => t !== sidecar.tokens[i]))
        throw new Error("restored tokens differ from the sidecar");
      this.stats.restored++;
      // Recently used: the folder's LRU cap keeps it longest.
      const now = new Date();
      await utimes(this.sidecarPath(base), now, now).catch(() => undefined);
      return loaded.length;
    } catch (error) {
      this.log(`ignoring a saved KV cache (${(error as Error).message}); evaluating instead`);
      await sequence.clearHistory().catch(() => undefined);
      await this.reject(base);
      return 0;
    }
  }

  /** Delete a candidate that turned out useless for the prompt (e.g. an edited conversation). */
  async discard(candidate: KvStateCandidate): Promise<void> {
    await this.reject(candidate.base);
  }

  private async reject(base: string): Promise<void> {
    this.stats.rejected++;
    await removeState(this.dir, base);
  }

  /** Create the folder and delete leftovers of a crash (temp files, state files no sidecar names). */
  private prepare(): Promise<void> {
    this.prepared ??= (async () => {
      await ensurePrivateDir(this.dir);
      const names = await readdir(this.dir);
      // States an older build saved 0644 become 0600.
      await makePrivate(...names.map((n) => join(this.dir, n))).catch(() => undefined);
      const named = new Set<string>();
      for (const name of names.filter((n) => n.endsWith(".json"))) {
        const sidecar = await readSidecar(join(this.dir, name));
        if (sidecar) named.add(sidecar.kvFile);
      }
      for (const name of names) {
        if (name.endsWith(".tmp") || (name.endsWith(".kv") && !named.has(name)))
          await remove(join(this.dir, name));
      }
    })();
    return this.prepared;
  }

  /** Keep the folder within maxFiles / maxTotalBytes, deleting the least recently used first. */
  private async prune(): Promise<void> {
    // File names alone say which state file belongs to which sidecar: no sidecar is parsed
    // here (they hold every token of their conversation), this runs after each answer.
    const names = await readdir(this.dir);
    const entries: { base: string; used: number; bytes: number }[] = [];
    for (const name of names) {
      if (!name.endsWith(".json")) continue;
      const base = name.slice(0, -5);
      const kvFiles = names.filter((n) => n.startsWith(`${base}.`) && n.endsWith(".kv"));
      try {
        const [info, ...kvs] = await Promise.all([name, ...kvFiles].map((n) => stat(join(this.dir, n))));
        if (kvs.length === 0) throw new Error("no state file");
        entries.push({ base, used: info!.mtimeMs, bytes: kvs.reduce((sum, kv) => sum + kv.size, 0) });
      } catch {
        await this.reject(base);
      }
    }
    entries.sort((a, b) => b.used - a.used);
    let total = 0;
    for (const [i, entry] of entries.entries()) {
      total += entry.bytes;
      if (i >= this.limits.maxFiles || total > this.limits.maxTotalBytes)
        await removeState(this.dir, entry.base);
    }
  }

  private baseName(sessionKey: string, adapterSetKey: string): string {
    return createHash("sha256")
      .update(JSON.stringify([sessionKey, this.identity.modelPath, adapterSetKey]))
      .digest("hex");
  }

  /** A temp file of its own: two turns of one conversation may restore its state at once. */
  private tempPath(base: string): string {
    return join(this.dir, `${base}.${randomUUID()}.kv.tmp`);
  }

  private sidecarPath(base: string): string {
    return join(this.dir, `${base}.json`);
  }
}

/** Length of the common prefix of a saved state's tokens and a prompt's. */
export function sharedPrefix(saved: readonly number[], prompt: readonly Token[]): number {
  const n = Math.min(saved.length, prompt.length);
  let i = 0;
  while (i < n && saved[i] === prompt[i]) i++;
  return i;
}

function sameIdentity(a: KvStateIdentity, b: KvStateIdentity): boolean {
  return (
    a.modelPath === b.modelPath &&
    a.modelSize === b.modelSize &&
    a.modelMtimeMs === b.modelMtimeMs &&
    a.engine === b.engine
  );
}

async function fileStamps(paths: readonly string[]): Promise<Sidecar["adapterFiles"]> {
  return Promise.all(
    paths.map(async (path) => {
      const info = await stat(path);
      return { path, size: info.size, mtimeMs: info.mtimeMs };
    }),
  );
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

async function remove(path: string): Promise<void> {
  await unlink(path).catch(() => undefined);
}

/** The sidecar at `path`, or null when it is missing or not one of this format. */
async function readSidecar(path: string): Promise<Sidecar | null> {
  try {
    return SidecarSchema.parse(JSON.parse(await readFile(path, "utf8")));
  } catch {
    return null;
  }
}

/** Delete the sidecar of `base` in `dir`, then every state file of `base`. */
async function removeState(dir: string, base: string): Promise<void> {
  await remove(join(dir, `${base}.json`));
  await removeStateFiles(dir, base, null);
}

/** Delete the state files of `base` in `dir` other than `keep` (the one its sidecar names). */
async function removeStateFiles(dir: string, base: string, keep: string | null): Promise<void> {
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (name !== keep && name.startsWith(`${base}.`) && name.endsWith(".kv")) await remove(join(dir, name));
  }
}

/**
 * Delete every saved state of `sessionKey` in `dir` (e.g. when its conversation is deleted: the
 * files hold its tokens). Works without a loaded model; never throws.
 */
export async function deleteSavedStates(dir: string, sessionKey: string): Promise<number> {
  let deleted = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.endsWith(".json")) continue;
    try {
      const sidecar = JSON.parse(await readFile(join(dir, name), "utf8")) as { sessionKey?: unknown };
      if (sidecar.sessionKey !== sessionKey) continue;
    } catch {
      continue;
    }
    await removeState(dir, name.slice(0, -5));
    deleted++;
  }
  return deleted;
}
