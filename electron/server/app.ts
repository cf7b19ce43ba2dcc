/**
 * The headless server: the app API (HTTP + WebSocket), the OpenAI-compatible /v1 and the UI,
 * in one Fastify instance around a Core. Listening is the caller's job (see start.ts).
 */
import fastifyCookie from "@fastify/cookie";
import fastifyWebsocket from "@fastify/websocket";
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import type { ErrorCode, Result } from "../api";
import type { Core } from "../core/core-types";
import { API_BODY_LIMIT, registerApiRoutes, sendApiError } from "./api-routes";
import { ApiKeyGate, LoginCodes, loginStep, registerLoginCodeRoute } from "./auth";
import type { SessionStore } from "./session-store";
import { anthropicErrorBody, isAnthropicPath } from "./anthropic/errors";
import { OpenAiError, sendOpenAiError } from "./openai/errors";
import { registerOpenAiRoutes } from "./openai/routes";
import { createV1Context, logUnexpected } from "./openai/turn";
import { isOllamaPath, ollamaErrorBody, registerOllamaRoutes } from "./ollama/routes";
import { registerStaticUi, securityHeaders } from "./static-ui";
import { corsHook } from "./cors";

export interface ServerOptions {
  core: Core;
  /** Every /api and /v1 call must present it. */
  apiKey: string;
  /** The sign-in codes the printed URL carries (start.ts issues them); default: a fresh store. */
  loginCodes?: LoginCodes;
  /** Where browser sessions are kept (start.ts: the data folder); default: in memory. */
  sessions?: SessionStore;
  /** The renderer build (out/renderer); when it has no index.html, pages answer 503. */
  rendererDir: string;
  /** The address the server binds to. On a loopback address, requests naming another Host are refused (DNS rebinding). */
  host?: string;
  /** Shown in openapi.json. */
  version?: string;
  /** Fastify's logger option; off by default (the CLI prints its own lines). */
  logger?: boolean | { level: string };
  /**
   * "all" (default, headless mode): the app API, /v1 and the UI. "v1": only the model API
   * (/v1, key required) — what the desktop app serves when the user turns its local server on.
   */
  surfaces?: "all" | "v1";
  /**
   * Origins whose pages may call the model APIs (/v1, Ollama's /api routes) with the key: CORS
   * answers for them (cors.ts). Empty or absent: none (the default); `*`: any.
   */
  corsOrigins?: readonly string[];
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

/**
 * Answers an error in the shape of the API that was called: the app's `{ok:false, error}` under
 * /api, OpenAI's under /v1, plain text for pages. Every error answer goes through here.
 */
function sendError(request: FastifyRequest, reply: FastifyReply, status: number, message: string) {
  const path = pathOf(request);
  // Before the app API's: Ollama's paths sit under /api too (ollama/routes.ts).
  if (isOllamaPath(path)) return reply.code(status).type("application/json").send(ollamaErrorBody(message));
  if (isAnthropicPath(path)) {
    return reply.code(status).type("application/json").send(anthropicErrorBody(status, message));
  }
  if (isOpenAiPath(path)) {
    const error =
      status === 401
        ? new OpenAiError(401, "authentication_error", "invalid_api_key", message)
        : status === 403
          ? new OpenAiError(403, "permission_error", "forbidden", message)
          : status === 404
            ? new OpenAiError(404, "invalid_request_error", "not_found", message)
            : status >= 500
              ? new OpenAiError(status, "server_error", "internal", message)
              : new OpenAiError(status, "invalid_request_error", "invalid_request", message);
    return sendOpenAiError(reply, error);
  }
  if (isAppApiPath(path)) return sendApiError(reply, apiCodeFor(status), message, status);
  return reply.code(status).type("text/plain; charset=utf-8").send(message);
}

function apiCodeFor(status: number): ErrorCode {
  if (status === 401) return "unauthorized";
  if (status === 403) return "forbidden";
  if (status === 404) return "not_found";
  return status >= 500 ? "internal" : "invalid_input";
}

/** Answers a refusal in the shape of the API that was called. */
function refuse(request: FastifyRequest, reply: FastifyReply, status: 401 | 403, message: string) {
  if (status === 401) reply.header("www-authenticate", 'Bearer realm="macaron"');
  return sendError(request, reply, status, message);
}

/** What a client should read from a 4xx that Fastify raised (its own texts name internals). */
function clientMessage(error: FastifyError, request: FastifyRequest): string {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE": {
      const limit = request.routeOptions.bodyLimit ?? API_BODY_LIMIT;
      return `The request body is too large: this call takes at most ${limit} bytes.`;
    }
    case "FST_ERR_BAD_URL":
      return "The URL is not valid (a bad percent-escape).";
    case "FST_ERR_MAX_PARAM_LENGTH":
      return "The URL is too long.";
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return "Send the method input as JSON (content-type: application/json).";
    default:
      return error.message;
  }
}

/**
 * Errors Node's HTTP parser raises before there is a request (malformed request line, headers
 * too large): written to the socket like Fastify's default handler, but in the app's shape and
 * with the same security headers. There is no Host to check: nothing was routed.
 */
function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const [status, message] =
    error.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? [408, "The request took too long to arrive."]
      : error.code === "HPE_HEADER_OVERFLOW"
        ? [431, "The request headers are too large."]
        : [400, "The request is not valid HTTP."];
  const body: Result<never> = { ok: false, error: { code: "invalid_input", message } };
  const text = JSON.stringify(body);
  const headers = {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
    ...securityHeaders(undefined),
    connection: "close",
  };
  if (socket.writable) {
    const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines.join("")}\r\n${text}`);
  }
  socket.destroy(error);
}

function hostnameOf(hostHeader: string): string {
  if (hostHeader.startsWith("[")) return hostHeader.slice(0, hostHeader.indexOf("]") + 1);
  return hostHeader.split(":")[0] ?? "";
}

/** Builds the server; call `listen()` on it, and `close()` when done (the core is the caller's to close). */
export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  const { core } = options;
  const gate = new ApiKeyGate(options.apiKey, options.sessions);
  const loginCodes = options.loginCodes ?? new LoginCodes();
  const v1Only = options.surfaces === "v1";
  const loopbackOnly = options.host !== undefined && LOOPBACK_HOSTS.has(options.host);
  // A page on another domain that resolves to 127.0.0.1 (DNS rebinding) would otherwise count as same-origin.
  const foreignHost = (request: FastifyRequest) =>
    loopbackOnly && !LOOPBACK_HOSTS.has(hostnameOf(request.headers.host ?? "").toLowerCase());

  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: API_BODY_LIMIT,
    forceCloseConnections: true,
    clientErrorHandler,
    // Errors the router raises before any hook runs (a bad escape, a path segment over
    // maxParamLength): no onRequest/onSend hooks run for them, so the Host check and the
    // headers are applied here, the same as for every other response.
    frameworkErrors: (error, request, reply) => {
      reply.headers(securityHeaders(request.headers.host));
      if (foreignHost(request)) {
        void refuse(request, reply, 403, "Unknown Host header.");
        return;
      }
      const status =
        error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
      void sendError(request, reply, status, clientMessage(error, request));
    },
  });

  // First, so that it covers every route, plugin and handler registered after it.
  app.addHook("onSend", async (request, reply) => {
    reply.headers(securityHeaders(request.headers.host));
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
    if (status !== 500) return sendError(request, reply, status, clientMessage(error, request));
    // Logged with an id that the answer carries, so a report can be matched to the stack.
    const id = logUnexpected(error);
    request.log.error({ err: error, errorId: id });
    return sendError(
      request,
      reply,
      status,
      `Internal server error (error id ${id}; the server's log has the details).`,
    );
  });

  await app.register(fastifyCookie);
  await app.register(fastifyWebsocket, { options: { maxPayload: 64 * 1024 } });

  const cors = options.corsOrigins?.length ? corsHook(options.corsOrigins, isOllamaPath) : null;
  app.addHook("onRequest", async (request, reply) => {
    if (foreignHost(request)) return refuse(request, reply, 403, "Unknown Host header.");
    const path = pathOf(request);
    // A preflight is answered here, before the key check (browsers send it without credentials).
    if (cors && (await cors(request, reply, path))) return reply;
    if (v1Only) return;
    const step = loginStep(request, path, !isAppApiPath(path) && !isOpenAiPath(path), gate, loginCodes);
    if (step.kind === "none") return;
    if (step.kind === "refuse") {
      if (step.status === 401) return refuse(request, reply, 401, step.message);
      return sendError(request, reply, step.status, step.message);
    }
    if (step.setCookie) gate.setSessionCookie(reply);
    return reply.code(302).header("cache-control", "no-store").redirect(step.target);
  });

  if (!v1Only) app.get("/api/health", (_request, reply) => reply.send({ ok: true }));

  // An encapsulated context: the key check applies to exactly the routes registered in it.
  await app.register((api, _opts, done) => {
    api.addHook("onRequest", (request, reply, next) => {
      const outcome = gate.check(request);
      if (outcome.ok) return next();
      void refuse(request, reply, outcome.status, outcome.message);
    });
    if (!v1Only) registerApiRoutes(api, core, options.version ?? process.env.npm_package_version ?? "0.0.0");
    registerOpenAiRoutes(api, core);
    registerOllamaRoutes(
      api,
      createV1Context(core),
      options.version ?? process.env.npm_package_version ?? "0.0.0",
    );
    if (!v1Only) registerLoginCodeRoute(api, loginCodes, gate);
    done();
  });

  if (v1Only) {
    app.setNotFoundHandler((request, reply) => {
      const outcome = gate.check(request);
      if (!outcome.ok) return refuse(request, reply, outcome.status, outcome.message);
      return sendError(request, reply, 404, `No route ${request.method} ${pathOf(request)}`);
    });
    return app;
  }

  await registerStaticUi(app, options.rendererDir, (request, reply) => {
    // Unknown API paths are still API paths: no key, no answer about what exists.
    const outcome = gate.check(request);
    if (!outcome.ok) return refuse(request, reply, outcome.status, outcome.message);
    return sendError(request, reply, 404, `No route ${request.method} ${pathOf(request)}`);
  });
  return app;
}
