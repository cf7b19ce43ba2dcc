/**
 * The headless server: the app API (HTTP + WebSocket), the OpenAI-compatible /v1 and the UI,
 * in one Fastify instance around a Core. Listening is the caller's job (see start.ts).
 */
import fastifyCookie from "@fastify/cookie";
import fastifyWebsocket from "@fastify/websocket";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import type { Core } from "../core/core-types";
import { API_BODY_LIMIT, registerApiRoutes, sendApiError } from "./api-routes";
import { ApiKeyGate } from "./auth";
import { OpenAiError, sendOpenAiError } from "./openai/errors";
import { registerOpenAiRoutes } from "./openai/routes";
import { registerStaticUi } from "./static-ui";

export interface ServerOptions {
  core: Core;
  /** Every /api and /v1 call must present it. */
  apiKey: string;
  /** The renderer build (out/renderer); when it has no index.html, pages answer 503. */
  rendererDir: string;
  /** The address the server binds to. On a loopback address, requests naming another Host are refused (DNS rebinding). */
  host?: string;
  /** Shown in openapi.json. */
  version?: string;
  /** Fastify's logger option; off by default (the CLI prints its own lines). */
  logger?: boolean | { level: string };
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

function pathOf(request: FastifyRequest): string {
  const url = request.url;
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

function isOpenAiPath(path: string): boolean {
  return path === "/v1" || path.startsWith("/v1/");
}

function isAppApiPath(path: string): boolean {
  return path === "/api" || path.startsWith("/api/");
}

/** Answers a refusal in the shape of the API that was called. */
function refuse(request: FastifyRequest, reply: FastifyReply, status: 401 | 403, message: string) {
  if (status === 401) reply.header("www-authenticate", 'Bearer realm="macaron"');
  const path = pathOf(request);
  if (isOpenAiPath(path)) {
    const error =
      status === 401
        ? new OpenAiError(401, "authentication_error", "invalid_api_key", message)
        : new OpenAiError(403, "permission_error", "forbidden", message);
    return sendOpenAiError(reply, error);
  }
  if (isAppApiPath(path))
    return sendApiError(reply, status === 401 ? "unauthorized" : "forbidden", message, status);
  return reply.code(status).type("text/plain; charset=utf-8").send(message);
}

function hostnameOf(hostHeader: string): string {
  if (hostHeader.startsWith("[")) return hostHeader.slice(0, hostHeader.indexOf("]") + 1);
  return hostHeader.split(":")[0] ?? "";
}

/** Builds the server; call `listen()` on it, and `close()` when done (the core is the caller's to close). */
export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  const { core } = options;
  const gate = new ApiKeyGate(options.apiKey);
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: API_BODY_LIMIT,
    forceCloseConnections: true,
  });

  // JSON only: HTML forms cannot send it without a CORS preflight, which this server never grants.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    if (text.trim() === "") return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(Object.assign(new Error("The body is not valid JSON."), { statusCode: 400 }), undefined);
    }
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status =
      error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error(error);
    const message = status === 500 ? "Internal server error." : error.message;
    const path = pathOf(request);
    if (isOpenAiPath(path)) {
      const type = status === 500 ? "server_error" : "invalid_request_error";
      return sendOpenAiError(
        reply,
        new OpenAiError(status, type, status === 500 ? "internal" : "invalid_request", message),
      );
    }
    if (isAppApiPath(path))
      return sendApiError(reply, status === 500 ? "internal" : "invalid_input", message, status);
    return reply.code(status).type("text/plain; charset=utf-8").send(message);
  });

  await app.register(fastifyCookie);
  await app.register(fastifyWebsocket, { options: { maxPayload: 64 * 1024 } });

  const loopbackOnly = options.host !== undefined && LOOPBACK_HOSTS.has(options.host);
  app.addHook("onRequest", async (request, reply) => {
    // A page on another domain that resolves to 127.0.0.1 (DNS rebinding) would otherwise count as same-origin.
    if (loopbackOnly && !LOOPBACK_HOSTS.has(hostnameOf(request.headers.host ?? "").toLowerCase())) {
      return refuse(request, reply, 403, "Unknown Host header.");
    }
    const path = pathOf(request);
    if (isAppApiPath(path) || isOpenAiPath(path) || (request.method !== "GET" && request.method !== "HEAD"))
      return;
    const query = new URLSearchParams(request.url.slice(path.length + 1));
    const token = query.get("token");
    if (token === null) return;
    if (!gate.keyMatches(token)) return refuse(request, reply, 401, "Invalid token.");
    gate.setSessionCookie(reply);
    query.delete("token");
    const rest = query.toString();
    // One leading slash only: "//evil.example" would be a protocol-relative redirect.
    const target = "/" + path.replace(/^[/\\]+/, "") + (rest ? `?${rest}` : "");
    return reply.code(302).header("cache-control", "no-store").redirect(target);
  });

  app.get("/api/health", (_request, reply) => reply.send({ ok: true }));

  // An encapsulated context: the key check applies to exactly the routes registered in it.
  await app.register((api, _opts, done) => {
    api.addHook("onRequest", (request, reply, next) => {
      const outcome = gate.check(request);
      if (outcome.ok) return next();
      void refuse(request, reply, outcome.status, outcome.message);
    });
    registerApiRoutes(api, core, options.version ?? process.env.npm_package_version ?? "0.0.0");
    registerOpenAiRoutes(api, core);
    done();
  });

  await registerStaticUi(app, options.rendererDir, (request, reply) => {
    // Unknown API paths are still API paths: no key, no answer about what exists.
    const outcome = gate.check(request);
    if (!outcome.ok) return refuse(request, reply, outcome.status, outcome.message);
    const path = pathOf(request);
    if (isOpenAiPath(path)) {
      return sendOpenAiError(
        reply,
        new OpenAiError(404, "invalid_request_error", "not_found", `No route ${request.method} ${path}`),
      );
    }
    return sendApiError(reply, "not_found", `No route ${request.method} ${path}`);
  });
  return app;
}
