/**
 * The reference feedback service: installs register for a token, upload redacted feedback in
 * gzip batches, can delete everything they uploaded; an admin exports per-domain datasets.
 * No fault-injection hook lives here: tests put testing/cloud/fault-proxy.ts in front.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { bearerToken, hashToken, newToken, sameSecret } from "./auth";
import { exportDataset, type PiiScan } from "./export";
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
import { FeedbackStore } from "./store";

const gunzipAsync = promisify(gunzip);

export interface CloudOptions {
  dataDir: string;
  /** Bearer key of the export endpoint. */
  adminKey: string;
  /** Re-checks exported text for PII; default: the app's own redactor (same rules as the client). */
  piiScan?: PiiScan;
  /** Domains items may be about; default chat, coding, agent, ui. */
  domains?: readonly string[];
  /** Size caps; LIMITS unless a test lowers them. */
  limits?: { maxBatchBytes?: number; maxCompressedBytes?: number };
  now?: () => number;
  logger?: boolean;
}

export interface CloudApp {
  app: FastifyInstance;
  store: FeedbackStore;
  /** The adapter registry (index, files, publish): see registry.ts. */
  registry: RegistryStore;
}

class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** Builds the service (not listening yet); closing the app closes the database. */
export function createCloudApp(opts: CloudOptions): CloudApp {
  const store = new FeedbackStore(opts.dataDir);
  const now = opts.now ?? Date.now;
  const scan = opts.piiScan ?? redact;
  const domains = new Set(opts.domains ?? DEFAULT_DOMAINS);
  const maxBatchBytes = opts.limits?.maxBatchBytes ?? LIMITS.maxBatchBytes;
  const maxCompressedBytes = opts.limits?.maxCompressedBytes ?? LIMITS.maxCompressedBytes;

  // The raw body limit is the larger of the two; the parser applies the one that fits the encoding.
  const app = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: Math.max(maxBatchBytes, maxCompressedBytes),
  });
  app.addHook("onClose", (_app, done) => {
    store.close();
    done();
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
    void reply.status(status).send({ error: status === 500 ? "internal error" : err.message });
  });

  /** The install a Bearer token belongs to; 401 otherwise. */
  const authInstall = (req: FastifyRequest): string => {
    const token = bearerToken(req.headers.authorization);
    if (!token) throw new HttpError(401, "missing Authorization: Bearer <install token>");
    const installId = store.installForTokenHash(hashToken(token));
    if (!installId) throw new HttpError(401, "unknown or rotated install token");
    return installId;
  };

  app.get("/v1/health", (_req, reply) =>
    reply.send({ ok: true, protocol: PROTOCOL_VERSION, items: store.countItems() }),
  );

  app.post("/v1/installs", { bodyLimit: 4096 }, (req, reply) => {
    const parsed = RegisterRequest.safeParse(req.body);
    if (!parsed.success) throw new HttpError(400, "body must be {installId: uuid}");
    const token = newToken();
    store.saveInstall(parsed.data.installId, hashToken(token), now());
    return reply.send({ installId: parsed.data.installId, token });
  });

  app.post("/v1/feedback/batches", (req, reply) => {
    const tokenInstall = authInstall(req);
    const check = checkBatch(req.body, domains);
    if (!check.ok) throw new HttpError(400, check.reason);
    if (check.installId !== tokenInstall) throw new HttpError(403, "installId does not match the token");
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
    const { accepted, duplicates } = store.storeBatch(tokenInstall, check.batchId, valid, now());
    const answer: BatchResponse = { accepted, duplicates: [...duplicates, ...sameBatchDuplicates], rejected };
    return reply.send(answer);
  });

  app.delete<{ Params: { installId: string } }>("/v1/installs/:installId/data", (req, reply) => {
    const tokenInstall = authInstall(req);
    if (req.params.installId !== tokenInstall) throw new HttpError(403, "installId does not match the token");
    return reply.send({ installId: tokenInstall, deletedItems: store.deleteInstallItems(tokenInstall) });
  });

  // Datasets: /v1/export/<domain>.jsonl (one split's lines) and /v1/export/<domain>.report.json
  // (every count, both splits). Query: type, split, maxTokens, heldoutShare, bytesPerToken.
  app.get<{ Params: { file: string }; Querystring: RawQuery }>(
    "/v1/export/:file",
    (req, reply: FastifyReply) => {
      const key = bearerToken(req.headers.authorization);
      if (!key || !sameSecret(key, opts.adminKey)) throw new HttpError(401, "admin key required");
      const m = /^([a-z0-9_-]{1,64})\.(jsonl|report\.json)$/.exec(req.params.file);
      if (!m)
        throw new HttpError(
          404,
          "export path is /v1/export/<domain>.jsonl or /v1/export/<domain>.report.json",
        );
      const parsed = parseExportQuery(req.query);
      if (!parsed.ok) throw new HttpError(400, parsed.reason);
      const { query } = parsed;
      const { lines, report } = exportDataset(store, m[1]!, { ...query, scan });
      if (m[2] === "report.json") return reply.send(report);
      return reply
        .header("content-type", "application/jsonl; charset=utf-8")
        .header("x-export-stats", JSON.stringify(report))
        .send(lines[query.split].map((l) => l + "\n").join(""));
    },
  );

  const registry = registerRegistry(app, { dataDir: opts.dataDir, adminKey: opts.adminKey, now });
  return { app, store, registry };
}

export interface RunningCloud extends CloudApp {
  url: string;
  adminKey: string;
  close(): Promise<void>;
}

/** Starts the service on host:port (0 = a free port). */
export async function startCloud(
  opts: Omit<CloudOptions, "adminKey"> & { adminKey?: string; host?: string; port?: number },
): Promise<RunningCloud> {
  const adminKey = opts.adminKey ?? newToken();
  const cloud = createCloudApp({ ...opts, adminKey });
  const host = opts.host ?? "127.0.0.1";
  await cloud.app.listen({ host, port: opts.port ?? 0 });
  const addr = cloud.app.server.address();
  const port = typeof addr === "object" && addr ? addr.port : opts.port;
  const shown = host.includes(":") ? `[${host}]` : host;
  return { ...cloud, url: `http://${shown}:${port}`, adminKey, close: () => cloud.app.close() };
}
