/**
 * The adapter registry of the reference service: an index of published adapter versions
 * (GET /v1/registry/index.json), their files with HTTP Range support for resumable downloads
 * (GET /v1/registry/files/:name), and an admin publish endpoint (POST /v1/registry/publish,
 * raw body = the GGUF, manifest in the `x-macaron-manifest` header as base64url JSON).
 * Files and the index live in <dataDir>/registry, a folder several replicas may share: a file
 * is named by its content's sha256 (the same bytes are one file, never rewritten), written to a
 * temp file and renamed into place; the index is rewritten the same way, under a lock folder
 * (mkdir is atomic) so that two replicas publishing at once do not lose either version.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { createHash, randomBytes } from "node:crypto";
import {
  createReadStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";
import { bearerToken, sameSecret } from "./auth";
import {
  MANIFEST_HEADER,
  PublishManifest,
  REGISTRY_FORMAT,
  RegistryIndex,
  type RegistryEntry,
} from "../common/registry-protocol";

export interface RegistryOptions {
  dataDir: string;
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

/** The registry's files and index on disk. */
export class RegistryStore {
  readonly dir: string;
  private readonly indexPath: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, "registry");
    mkdirSync(join(this.dir, "files"), { recursive: true });
    this.indexPath = join(this.dir, "index.json");
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

  /** Runs `fn` holding the index lock, shared by every replica on the folder. */
  private async locked<T>(fn: () => T): Promise<T> {
    const lock = join(this.dir, "index.lock");
    const until = Date.now() + 10_000;
    for (;;) {
      try {
        mkdirSync(lock);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
        const held = statSync(lock, { throwIfNoEntry: false });
        if (!held) continue; // released between the two calls
        if (Date.now() - held.mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
        else if (Date.now() > until) throw new RegistryError(503, "the registry index is locked; try again");
        else await sleep(20);
      }
    }
    try {
      return fn();
    } finally {
      rmSync(lock, { recursive: true, force: true });
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
    if (current.adapters.some((a) => a.id === manifest.id && a.version === manifest.version))
      throw new RegistryError(409, `${manifest.id} ${manifest.version} is already published`);
    const entry: RegistryEntry = {
      ...manifest,
      sha256,
      sizeBytes,
      url: `/v1/registry/files/${name}`,
      publishedAt: now,
    };
    const index: RegistryIndex = { ...current, adapters: [...current.adapters, entry] };
    writeAtomically(this.indexPath, Buffer.from(`${JSON.stringify(index, null, 2)}\n`));
    return entry;
  }
}

/** A lock older than this was left by a replica that died mid-publish. */
const STALE_LOCK_MS = 30_000;

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
  const store = new RegistryStore(opts.dataDir);
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

  app.get("/v1/registry/index.json", (_req, reply) =>
    reply.header("cache-control", "no-store").send(store.index(opts.now())),
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

  app.post("/v1/registry/publish", { bodyLimit: maxFileBytes }, async (req, reply) => {
    try {
      const key = bearerToken(req.headers.authorization);
      if (!key || !sameSecret(key, opts.adminKey)) throw new RegistryError(401, "admin key required");
      if (!Buffer.isBuffer(req.body) || req.body.length === 0)
        throw new RegistryError(
          400,
          "the body must be the adapter file (content-type application/octet-stream)",
        );
      const header = req.headers[MANIFEST_HEADER];
      if (typeof header !== "string")
        throw new RegistryError(400, `missing ${MANIFEST_HEADER} header (base64url JSON)`);
      let json: unknown;
      try {
        json = JSON.parse(Buffer.from(header, "base64url").toString("utf8"));
      } catch {
        throw new RegistryError(400, `${MANIFEST_HEADER} is not base64url JSON`);
      }
      const manifest = PublishManifest.safeParse(json);
      if (!manifest.success)
        throw new RegistryError(400, `invalid manifest: ${manifest.error.issues[0]?.message ?? ""}`);
      return reply.send(await store.publish(manifest.data, req.body, opts.now()));
    } catch (err) {
      return fail(reply, err);
    }
  });
  return store;
}
