/**
 * The adapter registry of the reference service: an index of published adapter versions
 * (GET /v1/registry/index.json), their files with HTTP Range support for resumable downloads
 * (GET /v1/registry/files/:name), and an admin publish endpoint (POST /v1/registry/publish,
 * raw body = the GGUF, manifest in the `x-macaron-manifest` header as base64url JSON).
 * Files and the index live in <dataDir>/registry, a folder several replicas may share: a file
 * is named by its content's sha256 (the same bytes are one file, never rewritten), written to a
 * temp file and renamed into place; the index is rewritten the same way, under a lock folder
 * (see acquireDirLock: taken atomically, broken when its holder died) so that two replicas
 * publishing at once do not lose either version.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  type KeyObject,
} from "node:crypto";
import {
  createReadStream,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";
import { z } from "zod";
import { bearerToken, sameSecret } from "./auth";
import {
  BaseSha256,
  INDEX_BASE_PARAM,
  baseKey,
  fitsBase,
  MANIFEST_BYTES_HEADER,
  MAX_MANIFEST_BYTES,
  PublishManifest,
  REGISTRY_FORMAT,
  RegistryIndex,
  type RegistryEntry,
} from "../common/registry-protocol";
import { exportPublicKey, signEntry } from "../common/registry-signature";
import { describeIssues } from "../common/zod-issues";

export interface RegistryOptions {
  dataDir: string;
  /** The Ed25519 key entries are signed with; default `<dataDir>/registry/signing-key.pem`. */
  signingKey?: KeyObject;
  adminKey: string;
  now: () => number;
  /** Largest adapter file accepted by publish. */
  maxFileBytes?: number;
}

const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,150}\.gguf$/;

class RegistryError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** The signing key's file in the registry folder (PKCS#8 PEM, mode 0600). */
export const SIGNING_KEY_FILE = "signing-key.pem";

/**
 * The registry's Ed25519 signing key: `<registry>/signing-key.pem`, made on first use. Replicas
 * sharing the folder agree on one: the key is written aside and hard-linked into place, which
 * fails when another replica linked its own first; everyone then reads the one in place.
 */
function loadSigningKey(dir: string): KeyObject {
  const path = join(dir, SIGNING_KEY_FILE);
  if (!existsSync(path)) {
    const { privateKey } = generateKeyPairSync("ed25519");
    const temp = `${path}.${randomBytes(4).toString("hex")}.tmp`;
    writeFileSync(temp, privateKey.export({ format: "pem", type: "pkcs8" }), { mode: 0o600 });
    try {
      linkSync(temp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      rmSync(temp, { force: true });
    }
  }
  const key = createPrivateKey(readFileSync(path));
  if (key.asymmetricKeyType !== "ed25519") throw new Error(`${path} is not an Ed25519 private key`);
  return key;
}

/** The registry's files and index on disk. */
export class RegistryStore {
  readonly dir: string;
  private readonly indexPath: string;
  private readonly signingKey: KeyObject;
  /** The key apps pin to trust this registry: 32 raw bytes, base64url. */
  readonly publicKey: string;

  /** `signingKey`: the publisher's Ed25519 private key; default the folder's own (made on first use). */
  constructor(dataDir: string, signingKey?: KeyObject) {
    this.dir = join(dataDir, "registry");
    mkdirSync(join(this.dir, "files"), { recursive: true });
    this.indexPath = join(this.dir, "index.json");
    this.signingKey = signingKey ?? loadSigningKey(this.dir);
    this.publicKey = exportPublicKey(createPublicKey(this.signingKey));
  }

  private domainCache: { stamp: string; domains: Set<string> } = { stamp: "", domains: new Set() };

  /** The domains of every published adapter (read again when index.json changed, by any replica). */
  domains(): Set<string> {
    let stamp: string;
    try {
      // index.json is replaced by a rename: a new inode, whatever the clock's resolution.
      const st = statSync(this.indexPath);
      stamp = `${st.ino}:${st.mtimeMs}:${st.size}`;
    } catch {
      return this.domainCache.domains;
    }
    if (stamp !== this.domainCache.stamp)
      this.domainCache = { stamp, domains: new Set(this.index(0).adapters.map((a) => a.domain)) };
    return this.domainCache.domains;
  }

  index(now: number): RegistryIndex {
    if (!existsSync(this.indexPath)) return { format: REGISTRY_FORMAT, generatedAt: now, adapters: [] };
    const parsed = RegistryIndex.parse(JSON.parse(readFileSync(this.indexPath, "utf8")));
    return { ...parsed, generatedAt: now };
  }

  filePath(name: string): string {
    return join(this.dir, "files", name);
  }

  /** Store `body` as a new version and add it to the index (replacing nothing: versions are immutable). */
  async publish(
    manifest: ReturnType<typeof PublishManifest.parse>,
    body: Buffer,
    now: number,
  ): Promise<RegistryEntry> {
    const sha256 = createHash("sha256").update(body).digest("hex");
    if (manifest.sha256 && manifest.sha256 !== sha256)
      throw new RegistryError(400, `the body's sha256 is ${sha256}, the manifest says ${manifest.sha256}`);
    // Content-addressed: written before the lock (it is the slow part), and harmless if the
    // version turns out to exist (the file is what that version would point at anyway).
    const name = `${sha256}.gguf`;
    if (!existsSync(this.filePath(name))) writeAtomically(this.filePath(name), body);
    return this.locked(() => this.addToIndex(manifest, sha256, name, body.length, now));
  }

  /** Runs `fn` holding the index lock, shared by every replica (process) on the folder. */
  private async locked<T>(fn: () => T): Promise<T> {
    const release = await acquireDirLock(join(this.dir, INDEX_LOCK));
    try {
      return fn();
    } finally {
      release();
    }
  }

  private addToIndex(
    manifest: ReturnType<typeof PublishManifest.parse>,
    sha256: string,
    name: string,
    sizeBytes: number,
    now: number,
  ): RegistryEntry {
    const current = this.index(now);
    // Versions are per base: one base's 1.1.0 and another's are different adapters.
    const key = baseKey(manifest);
    if (
      current.adapters.some(
        (a) => a.id === manifest.id && a.version === manifest.version && baseKey(a) === key,
      )
    )
      throw new RegistryError(409, `${manifest.id} ${manifest.version} is already published for this base`);
    const unsigned: RegistryEntry = {
      ...manifest,
      sha256,
      sizeBytes,
      url: `/v1/registry/files/${name}`,
      publishedAt: now,
    };
    // Signed as it will be stored and served (JSON: undefined members are not part of it).
    const stored = JSON.parse(JSON.stringify(unsigned)) as Record<string, unknown>;
    const entry = { ...unsigned, signature: signEntry(stored, this.signingKey) };
    const index: RegistryIndex = { ...current, adapters: [...current.adapters, entry] };
    writeAtomically(this.indexPath, Buffer.from(`${JSON.stringify(index, null, 2)}\n`));
    return entry;
  }
}

export const INDEX_LOCK = "index.lock";

/**
 * A lock held longer than this was left by a replica that died holding it: the section it
 * guards is a read and a rename of index.json, milliseconds. A holder on this host is also
 * known dead at once, by its pid.
 */
export const STALE_LOCK_MS = 10_000;
/** How long a publish waits for the lock: longer than STALE_LOCK_MS, so a dead holder's lock is broken within it. */
const LOCK_WAIT_MS = 15_000;

const LockOwner = z.object({ pid: z.number(), host: z.string(), token: z.string() });
type LockOwner = z.infer<typeof LockOwner>;

/** The lock's owner, or null when it is gone or not (yet) readable. */
function readOwner(lock: string): LockOwner | null {
  try {
    return LockOwner.parse(JSON.parse(readFileSync(join(lock, "owner.json"), "utf8")));
  } catch {
    return null;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, owned by another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * True when the lock's holder is known dead (this host, no such pid) or has held it too long
 * (another host's holder, or this pid reused since).
 */
function isStale(lock: string, owner: LockOwner | null): boolean {
  if (owner && owner.host === hostname() && !pidAlive(owner.pid)) return true;
  const held = statSync(lock, { throwIfNoEntry: false });
  return held !== undefined && Date.now() - held.mtimeMs > STALE_LOCK_MS;
}

/**
 * Takes the lock folder `lock` (shared by processes, possibly on several hosts) and returns
 * its release. The folder is built aside with owner.json inside and renamed into place:
 * rename(2) onto a non-empty folder fails, so taking it is atomic and a lock folder always
 * names its owner. A stale lock is broken by renaming it aside first and checking that what
 * moved is the one judged stale (two waiters breaking one dead holder's lock must not also
 * break the lock the faster of them took meanwhile).
 */
export async function acquireDirLock(lock: string, waitMs = LOCK_WAIT_MS): Promise<() => void> {
  const me: LockOwner = { pid: process.pid, host: hostname(), token: randomBytes(8).toString("hex") };
  const until = Date.now() + waitMs;
  for (;;) {
    const temp = `${lock}.${me.token}.new`;
    mkdirSync(temp, { recursive: true });
    writeFileSync(join(temp, "owner.json"), JSON.stringify(me));
    try {
      renameSync(temp, lock);
      return () => removeLockIf(lock, me.token);
    } catch (err) {
      rmSync(temp, { recursive: true, force: true });
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOTEMPTY" && code !== "EEXIST") throw err;
    }
    const owner = readOwner(lock);
    if (isStale(lock, owner)) removeLockIf(lock, owner?.token);
    else if (Date.now() > until) throw new RegistryError(503, "the registry index is locked; try again");
    else await sleep(10);
  }
}

/**
 * Removes the lock folder only if the owner it names has `token` (undefined: an ownerless
 * folder, from an older build, judged by its age): renamed aside first, so that what is checked
 * is what is removed. Another holder's lock — taken between a waiter's look and its rename, or
 * the one that broke ours as stale — is put back; if yet another lock was taken in that instant,
 * that one goes on alone and the folder moved aside goes.
 */
function removeLockIf(lock: string, token: string | undefined): void {
  const aside = `${lock}.${randomBytes(8).toString("hex")}.removing`;
  try {
    renameSync(lock, aside);
  } catch {
    return; // gone already: released, or broken by another waiter
  }
  if (readOwner(aside)?.token !== token) {
    try {
      renameSync(aside, lock);
      return;
    } catch {
      // another lock is in place: that one stays, this stray folder goes
    }
  }
  rmSync(aside, { recursive: true, force: true });
}

function writeAtomically(path: string, data: Buffer): void {
  const temp = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(temp, data);
  renameSync(temp, path);
}

/** `bytes=START-` or `bytes=START-END` → the inclusive range, null when absent; throws 416. */
function parseRange(header: string | undefined, size: number): { start: number; end: number } | null {
  if (!header) return null;
  const m = /^bytes=(\d+)-(\d*)$/.exec(header.trim());
  if (!m) throw new RegistryError(416, "only single ranges `bytes=START-[END]` are supported");
  const start = Number(m[1]);
  const end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
  if (start >= size || end < start) throw new RegistryError(416, `range not satisfiable (size ${size})`);
  return { start, end };
}

/** Adds the registry routes to the cloud service. */
export function registerRegistry(app: FastifyInstance, opts: RegistryOptions): RegistryStore {
  const store = new RegistryStore(opts.dataDir, opts.signingKey);
  const maxFileBytes = opts.maxFileBytes ?? 2 * 1024 ** 3;

  app.addContentTypeParser(
    "application/octet-stream",
    { parseAs: "buffer", bodyLimit: maxFileBytes },
    (_req, body, done) => done(null, body),
  );

  const fail = (reply: FastifyReply, err: unknown): FastifyReply => {
    if (err instanceof RegistryError) return reply.status(err.statusCode).send({ error: err.message });
    throw err;
  };

  // `?base=<sha256>`: the entries for that base file only (an app asks for its own base's).
  app.get("/v1/registry/index.json", (req, reply) => {
    const base = (req.query as Record<string, unknown> | undefined)?.[INDEX_BASE_PARAM];
    const index = store.index(opts.now());
    if (base === undefined) return reply.header("cache-control", "no-store").send(index);
    // Hex is hex in either case (PowerShell's Get-FileHash prints upper case).
    const sha = BaseSha256.safeParse(typeof base === "string" ? base.toLowerCase() : base);
    if (!sha.success)
      return reply
        .status(400)
        .send({ error: `${INDEX_BASE_PARAM} must be a base file's sha256 (64 hex digits)` });
    return reply
      .header("cache-control", "no-store")
      .send({ ...index, adapters: index.adapters.filter((a) => fitsBase(a, sha.data)) });
  });

  // The key to pin, for operators and for an app on this machine (a loopback registry): an app
  // talking to a registry elsewhere is given the key with the registry's URL, never fetches it.
  app.get("/v1/registry/public-key", (_req, reply) =>
    reply.send({ algorithm: "ed25519", key: store.publicKey }),
  );

  app.get<{ Params: { name: string } }>(
    "/v1/registry/files/:name",
    (req: FastifyRequest<{ Params: { name: string } }>, reply) => {
      try {
        const name = req.params.name;
        if (!FILE_NAME.test(name)) throw new RegistryError(404, "no such file");
        const path = store.filePath(name);
        if (!existsSync(path)) throw new RegistryError(404, "no such file");
        const size = statSync(path).size;
        const range = parseRange(req.headers.range, size);
        reply.header("accept-ranges", "bytes").header("content-type", "application/octet-stream");
        if (!range) return reply.header("content-length", size).send(createReadStream(path));
        return reply
          .status(206)
          .header("content-range", `bytes ${range.start}-${range.end}/${size}`)
          .header("content-length", range.end - range.start + 1)
          .send(createReadStream(path, { start: range.start, end: range.end }));
      } catch (err) {
        return fail(reply, err);
      }
    },
  );

  app.post("/v1/registry/publish", { bodyLimit: maxFileBytes + MAX_MANIFEST_BYTES }, async (req, reply) => {
    try {
      const key = bearerToken(req.headers.authorization);
      if (!key || !sameSecret(key, opts.adminKey)) throw new RegistryError(401, "admin key required");
      const header = req.headers[MANIFEST_BYTES_HEADER];
      const manifestBytes = typeof header === "string" && /^\d{1,8}$/.test(header) ? Number(header) : NaN;
      if (!(manifestBytes > 0 && manifestBytes <= MAX_MANIFEST_BYTES))
        throw new RegistryError(
          400,
          `${MANIFEST_BYTES_HEADER} must give the manifest's length in bytes (1 to ${MAX_MANIFEST_BYTES})`,
        );
      if (!Buffer.isBuffer(req.body) || req.body.length <= manifestBytes)
        throw new RegistryError(
          400,
          "the body must be the manifest's JSON followed by the adapter file (content-type application/octet-stream)",
        );
      let json: unknown;
      try {
        json = JSON.parse(req.body.subarray(0, manifestBytes).toString("utf8"));
      } catch {
        throw new RegistryError(400, `the body's first ${manifestBytes} bytes are not the manifest's JSON`);
      }
      const manifest = PublishManifest.safeParse(json);
      if (!manifest.success)
        throw new RegistryError(400, `invalid manifest: ${describeIssues(manifest.error)}`);
      return reply.send(await store.publish(manifest.data, req.body.subarray(manifestBytes), opts.now()));
    } catch (err) {
      return fail(reply, err);
    }
  });
  return store;
}
