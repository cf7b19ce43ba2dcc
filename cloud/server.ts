/**
 * The reference feedback service: installs register for a token, upload redacted feedback in
 * gzip batches, can delete everything they uploaded; an admin exports per-domain datasets.
 * No fault-injection hook lives here: tests put testing/cloud/fault-proxy.ts in front.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { bearerToken, hashToken, newToken, sameSecret } from "./auth";
import { domainFilter, streamDataset, type PiiScan, type StreamedExport } from "./export";
import type { Split } from "./prepare/split";
import { checkBatch, DEFAULT_DOMAINS } from "./ingest";
import { redact } from "../common/redaction";
import { parseExportQuery, type RawQuery } from "./prepare/query";
import {
  LIMITS,
  PROTOCOL_VERSION,
  RegisterRequest,
  type BatchResponse,
  type FeedbackItem,
} from "../common/feedback-protocol";
import { registerRegistry, type RegistryStore } from "./registry";
import { domainNameProblem, type DomainCheck } from "../common/domains";
import { createHash, type KeyObject } from "node:crypto";
import { once } from "node:events";
import { PassThrough } from "node:stream";
import { SqliteStore } from "./store/sqlite-store";
import { PostgresStore } from "./store/postgres-store";
import type { CloudStore } from "./store/store";

const gunzipAsync = promisify(gunzip);

/** Per-install caps; each is shared by every replica (the counts live in the store). */
export interface InstallLimitOptions {
  /** Batches one install may post per window; null: no cap. */
  batchesPerWindow?: number | null;
  windowMs?: number;
  /** Items one batch may carry (at most LIMITS.maxItemsPerBatch, the protocol's cap). */
  maxItemsPerBatch?: number;
  /** Items one install may have stored; null: no cap. */
  maxStoredItems?: number | null;
  /** Retry-After of a 429 for the storage cap (it frees only when the user deletes data). */
  quotaRetryAfterSeconds?: number;
}

/** Generous: a real install posts a batch every few minutes at most; the caps stop abuse. */
export const DEFAULT_INSTALL_LIMITS = {
  batchesPerWindow: 600,
  windowMs: 60_000,
  maxItemsPerBatch: LIMITS.maxItemsPerBatch,
  maxStoredItems: 1_000_000,
  quotaRetryAfterSeconds: 3600,
} as const satisfies Required<InstallLimitOptions>;

/**
 * Registrations (POST /v1/installs) per client address: an install registers once in its life
 * (and again only when its token is lost), so the cap only stops bursts. Counted in the store,
 * so every replica enforces the same window. Behind a reverse proxy set `trustProxy`, else
 * every client counts as the proxy's address.
 */
export interface RegistrationLimitOptions {
  /** Registrations one address may make per window; null: no cap. */
  perWindow?: number | null;
  windowMs?: number;
}

export const DEFAULT_REGISTRATION_LIMITS = {
  perWindow: 60,
  windowMs: 10 * 60_000,
} as const satisfies Required<RegistrationLimitOptions>;

export interface CloudOptions<S extends CloudStore = SqliteStore> {
  /** The adapter registry's folder, and cloud.db unless `store` is given. */
  dataDir: string;
  /** A store opened by the caller (startCloud opens PostgreSQL from `database`); default SQLite in dataDir. */
  store?: S;
  /** Bearer key of the export endpoint. */
  adminKey: string;
  /** Re-checks exported text for PII; default: the app's own redactor (same rules as the client). */
  piiScan?: PiiScan;
  /**
   * Domains items may be about (default the built-in ones, common/domains.ts), besides those of
   * published adapters.
   */
  domains?: readonly string[];
  /** Size caps; LIMITS unless a test lowers them. */
  limits?: {
    maxBatchBytes?: number;
    maxCompressedBytes?: number;
    perInstall?: InstallLimitOptions;
    registration?: RegistrationLimitOptions;
  };
  /** The Ed25519 key registry entries are signed with; default `<dataDir>/registry/signing-key.pem`. */
  registrySigningKey?: KeyObject;
  /** Take the client address from X-Forwarded-For (only behind a proxy you run). */
  trustProxy?: boolean;
  now?: () => number;
  logger?: boolean;
}

export interface CloudApp<S extends CloudStore = SqliteStore> {
  app: FastifyInstance;
  store: S;
  /** The adapter registry (index, files, publish): see registry.ts. */
  registry: RegistryStore;
}

class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** Builds the service (not listening yet); closing the app closes the store after in-flight requests. */
export function createCloudApp<S extends CloudStore = SqliteStore>(opts: CloudOptions<S>): CloudApp<S> {
  // Configured domains follow the one rule (common/domains.ts), checked before anything opens.
  for (const domain of opts.domains ?? []) {
    const problem = domainNameProblem(domain);
    if (problem !== null) throw new Error(`domains: ${problem}`);
  }
  const store = opts.store ?? (new SqliteStore(opts.dataDir) as CloudStore as S);
  const perInstall = { ...DEFAULT_INSTALL_LIMITS, ...opts.limits?.perInstall };
  const registration = { ...DEFAULT_REGISTRATION_LIMITS, ...opts.limits?.registration };
  const now = opts.now ?? Date.now;
  const scan = opts.piiScan ?? redact;
  const maxBatchBytes = opts.limits?.maxBatchBytes ?? LIMITS.maxBatchBytes;
  const maxCompressedBytes = opts.limits?.maxCompressedBytes ?? LIMITS.maxCompressedBytes;

  // The raw body limit is the larger of the two; the parser applies the one that fits the encoding.
  const app = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: Math.max(maxBatchBytes, maxCompressedBytes),
    trustProxy: opts.trustProxy ?? false,
  });
  // onClose runs after the in-flight requests have been answered: their batches are stored.
  app.addHook("onClose", async () => {
    await store.close();
  });
  // Shutting down: an answer in flight closes its connection, else a client's keep-alive
  // socket would hold the closing server open until keepAliveTimeout.
  // A socket that turns idle only after close began (a response finishing just then) is not
  // closed by Node's one-off closeIdleConnections and would hold the exit for keepAliveTimeout
  // (72 s in Fastify): while closing, idle sockets are closed as they appear.
  let closing = false;
  let sweeper: NodeJS.Timeout | null = null;
  app.addHook("preClose", (done) => {
    closing = true;
    sweeper = setInterval(() => app.server.closeIdleConnections(), 50);
    sweeper.unref();
    done();
  });
  app.addHook("onClose", (_instance, done) => {
    if (sweeper) clearInterval(sweeper);
    done();
  });
  app.addHook("onSend", (_req, reply, payload, done) => {
    if (closing) void reply.header("connection", "close");
    done(null, payload);
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    "application/json",
    { parseAs: "buffer" },
    async (request: FastifyRequest, raw: Buffer) => {
      const encoding = String(request.headers["content-encoding"] ?? "identity").toLowerCase();
      let body: Buffer;
      if (encoding === "gzip") {
        if (raw.length > maxCompressedBytes)
          throw new HttpError(413, `compressed body over ${maxCompressedBytes} bytes`);
        try {
          // maxOutputLength stops inflating at the cap: a gzip bomb costs at most maxBatchBytes.
          body = await gunzipAsync(raw, { maxOutputLength: maxBatchBytes });
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE")
            throw new HttpError(413, `body inflates past ${maxBatchBytes} bytes`);
          throw new HttpError(400, `invalid gzip body: ${(err as Error).message}`);
        }
      } else if (encoding === "identity") {
        body = raw;
      } else {
        throw new HttpError(415, `unsupported content-encoding "${encoding}" (use gzip or none)`);
      }
      if (body.length > maxBatchBytes) throw new HttpError(413, `body over ${maxBatchBytes} bytes`);
      try {
        return JSON.parse(body.toString("utf8")) as unknown;
      } catch (err) {
        throw new HttpError(400, `invalid JSON: ${(err as Error).message}`);
      }
    },
  );

  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status === 500) app.log.error(err);
    if (err instanceof HttpError && err.retryAfterSeconds !== undefined)
      void reply.header("retry-after", String(err.retryAfterSeconds));
    void reply.status(status).send({ error: status === 500 ? "internal error" : err.message });
  });

  // After the error handler (routes take the handler in place when they are added).
  const registry = registerRegistry(app, {
    dataDir: opts.dataDir,
    adminKey: opts.adminKey,
    now,
    signingKey: opts.registrySigningKey,
  });
  // Feedback is accepted about the configured domains and about any domain an adapter was
  // published for: a team that publishes a "math" specialist gets its users' math feedback.
  const configured = new Set(opts.domains ?? DEFAULT_DOMAINS);
  const domains: DomainCheck = { has: (d) => configured.has(d) || registry.domains().has(d) };

  /** The install a Bearer token belongs to; 401 otherwise. */
  const authInstall = async (req: FastifyRequest): Promise<string> => {
    const token = bearerToken(req.headers.authorization);
    if (!token) throw new HttpError(401, "missing Authorization: Bearer <install token>");
    const installId = await store.installForTokenHash(hashToken(token));
    if (!installId) throw new HttpError(401, "unknown or rotated install token");
    return installId;
  };

  app.get("/v1/health", async (_req, reply) =>
    reply.send({ ok: true, protocol: PROTOCOL_VERSION, items: await store.count() }),
  );
  // Liveness: the process answers. Readiness: the store answers and its schema is current (a
  // load balancer sends traffic only then; during shutdown fastify answers 503 by itself).
  app.get("/healthz", (_req, reply) => reply.send({ ok: true }));
  app.get("/readyz", async (_req, reply) => {
    const r = await store.ready();
    return reply
      .status(r.ok ? 200 : 503)
      .send(r.ok ? { ok: true, engine: store.engine, migrations: r.migrations } : r);
  });

  /** Counts a registration from this address; 429 with the window's end past the cap. */
  const checkRegisterRate = async (source: string): Promise<void> => {
    if (registration.perWindow === null) return;
    const t = now();
    const windowStart = Math.floor(t / registration.windowMs) * registration.windowMs;
    const n = await store.hitRegisterWindow(source, windowStart);
    if (n > registration.perWindow)
      throw new HttpError(
        429,
        `over ${registration.perWindow} registrations per ${registration.windowMs / 1000} s from this address`,
        Math.max(1, Math.ceil((windowStart + registration.windowMs - t) / 1000)),
      );
  };

  // A fresh id registers with no credentials; a registered id rotates its token only when the
  // request carries the current one (Authorization: Bearer), else 409: knowing an install's id
  // (it is in every batch) must not let anyone take over its token, data or deletion.
  app.post("/v1/installs", { bodyLimit: 4096 }, async (req, reply) => {
    await checkRegisterRate(req.ip);
    const parsed = RegisterRequest.safeParse(req.body);
    if (!parsed.success)
      throw new HttpError(400, "body must be {installId: uuid, token?: 43..128 base64url characters}");
    const presented = bearerToken(req.headers.authorization);
    const proposed = parsed.data.token;
    const token = proposed ?? newToken();
    // The proof: the current token, as Authorization or as the proposed token itself (a retry
    // whose first answer was lost proposes the token it already registered).
    const proof = presented ?? proposed;
    const result = await store.registerInstall(
      parsed.data.installId,
      hashToken(token),
      now(),
      proof ? hashToken(proof) : null,
    );
    if (result === "taken")
      throw new HttpError(
        409,
        "install id already registered: send its current token (Authorization: Bearer) to rotate it, or register a new install id",
      );
    return reply.send({ installId: parsed.data.installId, token });
  });

  /** Counts the request in the install's rate window; 429 with the window's end past the cap. */
  const checkRate = async (installId: string): Promise<void> => {
    if (perInstall.batchesPerWindow === null) return;
    const t = now();
    const windowStart = Math.floor(t / perInstall.windowMs) * perInstall.windowMs;
    const n = await store.hitRateWindow(installId, windowStart);
    if (n > perInstall.batchesPerWindow)
      throw new HttpError(
        429,
        `over ${perInstall.batchesPerWindow} batches per ${perInstall.windowMs / 1000} s for this install`,
        Math.max(1, Math.ceil((windowStart + perInstall.windowMs - t) / 1000)),
      );
  };

  app.post("/v1/feedback/batches", async (req, reply) => {
    const tokenInstall = await authInstall(req);
    await checkRate(tokenInstall);
    const check = checkBatch(req.body, domains);
    if (!check.ok) throw new HttpError(400, check.reason);
    if (check.installId !== tokenInstall) throw new HttpError(403, "installId does not match the token");
    // 413, not 429: the same batch would never pass, and the app splits or refuses on 413.
    if (check.items.length > perInstall.maxItemsPerBatch)
      throw new HttpError(413, `over ${perInstall.maxItemsPerBatch} items per batch for this install`);
    const rejected: BatchResponse["rejected"] = [];
    const valid: FeedbackItem[] = [];
    const seen = new Set<string>();
    const sameBatchDuplicates: string[] = [];
    for (const c of check.items) {
      if (!c.ok) rejected.push({ key: c.key, reason: c.reason });
      else if (seen.has(c.item.idempotencyKey)) sameBatchDuplicates.push(c.item.idempotencyKey);
      else {
        seen.add(c.item.idempotencyKey);
        valid.push(c.item);
      }
    }
    const items = (req.body as { items: unknown[] }).items;
    const result = await store.ingest({
      installId: tokenInstall,
      batchId: check.batchId,
      digest: createHash("sha256").update(JSON.stringify(items)).digest("hex"),
      items: valid,
      at: now(),
      limits: { maxStoredItems: perInstall.maxStoredItems },
      answer: ({ accepted, duplicates }): BatchResponse => ({
        accepted,
        duplicates: [...duplicates, ...sameBatchDuplicates],
        rejected,
      }),
    });
    if (result.kind === "unknown-install") throw new HttpError(401, "unknown or rotated install token");
    if (result.kind === "over-quota")
      throw new HttpError(
        429,
        `this install has ${result.stored} items stored, the cap is ${result.max}`,
        perInstall.quotaRetryAfterSeconds,
      );
    return reply.send(result.response);
  });

  app.delete<{ Params: { installId: string } }>("/v1/installs/:installId/data", async (req, reply) => {
    const tokenInstall = await authInstall(req);
    if (req.params.installId !== tokenInstall) throw new HttpError(403, "installId does not match the token");
    return reply.send({ installId: tokenInstall, deletedItems: await store.deleteItems(tokenInstall) });
  });

  // An export path's domain: the rule publishing and the feedback check apply (common/domains.ts),
  // so a domain whose feedback was accepted can be exported.
  const exportDomain = (name: string): string => {
    const problem = domainNameProblem(name);
    if (problem !== null) throw new HttpError(404, problem);
    return name;
  };

  const requireAdmin = (req: FastifyRequest): void => {
    const key = bearerToken(req.headers.authorization);
    if (!key || !sameSecret(key, opts.adminKey)) throw new HttpError(401, "admin key required");
  };

  // Every stored item of a domain as JSONL (`{installId, receivedAt, item}` a line), streamed
  // page by page from one snapshot: memory stays flat however many items there are.
  app.get<{ Params: { file: string } }>("/v1/export/raw/:file", (req, reply) => {
    requireAdmin(req);
    const m = /^([^.]*)\.jsonl$/.exec(req.params.file);
    if (!m) throw new HttpError(404, "raw export path is /v1/export/raw/<domain>.jsonl");
    const domain = exportDomain(m[1]!);
    return reply
      .header("content-type", "application/jsonl; charset=utf-8")
      .send(rawExportStream(store, domain));
  });

  // Datasets: /v1/export/<domain>.jsonl (one split's lines) and /v1/export/<domain>.report.json
  // (every count, both splits). Query: type, split, maxTokens, heldoutShare, bytesPerToken.
  app.get<{ Params: { file: string }; Querystring: RawQuery }>(
    "/v1/export/:file",
    async (req, reply: FastifyReply) => {
      requireAdmin(req);
      const m = /^([^.]*)\.(jsonl|report\.json)$/.exec(req.params.file);
      if (!m)
        throw new HttpError(
          404,
          "export path is /v1/export/<domain>.jsonl or /v1/export/<domain>.report.json",
        );
      const domain = exportDomain(m[1]!);
      const parsed = parseExportQuery(req.query);
      if (!parsed.ok) throw new HttpError(400, parsed.reason);
      const { query } = parsed;
      // Bounded memory: the store is read in one snapshot, which ends before the response
      // starts; the lines stream from the export's scratch file (see prepare/stream.ts).
      const exported = await streamDataset(store, domain, { ...query, scan });
      if (m[2] === "report.json") {
        exported.close();
        return reply.send(exported.report);
      }
      return reply
        .header("content-type", "application/jsonl; charset=utf-8")
        .header("x-export-stats", JSON.stringify(exported.report))
        .send(datasetStream(exported, query.split));
    },
  );

  return { app, store, registry };
}

/**
 * The raw export as a stream: one snapshot held while the response drains, a page at a time
 * (backpressure: the next page is read only once the socket took the last one).
 */
function rawExportStream(store: CloudStore, domain: string): PassThrough {
  const out = new PassThrough();
  const filter = domainFilter(domain);
  void store
    .withSnapshot(async (snap) => {
      let chunk = "";
      for await (const row of snap.items(filter)) {
        chunk += `${JSON.stringify({ installId: row.installId, receivedAt: row.receivedAt, item: JSON.parse(row.json) as unknown })}\n`;
        if (chunk.length < 64 * 1024) continue;
        if (!(await write(out, chunk))) return; // the client went away: end the snapshot
        chunk = "";
      }
      if (chunk) await write(out, chunk);
      out.end();
    })
    .catch((err: unknown) => out.destroy(err as Error));
  return out;
}

/** One split's lines, written as the socket takes them; the scratch file goes when it ends. */
function datasetStream(exported: StreamedExport, split: Split): PassThrough {
  const out = new PassThrough();
  void (async () => {
    try {
      let chunk = "";
      for (const line of exported.lines(split)) {
        chunk += `${line}\n`;
        if (chunk.length < 64 * 1024) continue;
        if (!(await write(out, chunk))) return; // the client went away
        chunk = "";
      }
      if (chunk) await write(out, chunk);
      out.end();
    } finally {
      exported.close();
    }
  })().catch((err: unknown) => out.destroy(err as Error));
  return out;
}

/** Writes and waits for the stream to want more; false when it was closed instead. */
async function write(out: PassThrough, data: string): Promise<boolean> {
  if (out.destroyed) return false;
  if (out.write(data)) return true;
  await Promise.race([once(out, "drain"), once(out, "close")]);
  return !out.destroyed;
}

export interface RunningCloud<S extends CloudStore = SqliteStore> extends CloudApp<S> {
  url: string;
  adminKey: string;
  close(): Promise<void>;
}

type StartOptions = Omit<CloudOptions, "adminKey" | "store"> & {
  adminKey?: string;
  host?: string;
  port?: number;
};

/** Starts the service on host:port (0 = a free port); `database` (postgres://…) picks PostgreSQL. */
export async function startCloud(opts: StartOptions & { database?: undefined }): Promise<RunningCloud>;
export async function startCloud(
  opts: StartOptions & { database: string },
): Promise<RunningCloud<CloudStore>>;
export async function startCloud(
  opts: StartOptions & { database?: string },
): Promise<RunningCloud<CloudStore>> {
  const adminKey = opts.adminKey ?? newToken();
  const store: CloudStore = opts.database
    ? await openStore(opts.database, opts.dataDir)
    : new SqliteStore(opts.dataDir);
  const cloud = createCloudApp<CloudStore>({ ...opts, adminKey, store });
  const host = opts.host ?? "127.0.0.1";
  await cloud.app.listen({ host, port: opts.port ?? 0 });
  const addr = cloud.app.server.address();
  const port = typeof addr === "object" && addr ? addr.port : opts.port;
  const shown = host.includes(":") ? `[${host}]` : host;
  return { ...cloud, url: `http://${shown}:${port}`, adminKey, close: () => cloud.app.close() };
}

/** `postgres://…` / `postgresql://…` opens PostgreSQL; `sqlite` (or nothing) the file in dataDir. */
export async function openStore(database: string | undefined, dataDir: string): Promise<CloudStore> {
  if (!database || database === "sqlite") return new SqliteStore(dataDir);
  if (/^postgres(ql)?:\/\//.test(database)) return PostgresStore.open(database);
  throw new Error(`--database must be postgres://… or sqlite, not "${database}"`);
}
