/**
 * Opt-in CORS for the model APIs (/v1 and Ollama's /api routes), so that browser-based clients
 * on the listed origins can call them with the key (`Authorization: Bearer`). Off unless origins
 * are given (`npm run serve -- --cors http://localhost:3000,https://app.example`; `*` allows any
 * origin). Credentials (cookies) are never allowed cross-origin: a page gets in only with the
 * key, and the app's own API (/api/call, /api/events) answers no cross-origin request. The desktop
 * app's "Local API server" setting lists its origins (electron/core/settings/local-server.ts);
 * which text is an origin is common/cors-origins.ts, for the flag and the setting alike.
 */
import type { FastifyReply, FastifyRequest } from "fastify";

export { parseCorsOrigins } from "../../common/cors-origins";

/** Headers browser clients send (OpenAI, Anthropic and Ollama SDKs) that a preflight must allow. */
const ALLOWED_HEADERS = [
  "authorization",
  "content-type",
  "x-api-key",
  "anthropic-version",
  "anthropic-beta",
  "anthropic-dangerous-direct-browser-access",
  "openai-organization",
  "openai-project",
  "x-stainless-arch",
  "x-stainless-lang",
  "x-stainless-os",
  "x-stainless-package-version",
  "x-stainless-retry-count",
  "x-stainless-runtime",
  "x-stainless-runtime-version",
  "x-stainless-timeout",
  "x-stainless-helper-method",
  "x-stainless-async",
];

/** Response headers a page may read (the seed that reproduces an answer). */
const EXPOSED_HEADERS = ["x-macaron-seed"];

function isModelApiPath(path: string, isOllamaPath: (path: string) => boolean): boolean {
  return path === "/v1" || path.startsWith("/v1/") || isOllamaPath(path);
}

/**
 * An onRequest hook: on the model APIs, a request from an allowed Origin gets
 * Access-Control-Allow-Origin, and its preflight (OPTIONS with Access-Control-Request-Method)
 * is answered 204 before the key check (browsers send preflights without credentials). Other
 * origins get no CORS headers, so their pages cannot read the answers.
 */
export function corsHook(origins: readonly string[], isOllamaPath: (path: string) => boolean) {
  const any = origins.includes("*");
  const allowed = new Set(origins);
  return async (request: FastifyRequest, reply: FastifyReply, path: string): Promise<boolean> => {
    const origin = request.headers.origin;
    if (origin === undefined || !isModelApiPath(path, isOllamaPath)) return false;
    if (!any && !allowed.has(origin)) return false;
    reply.header("access-control-allow-origin", origin);
    reply.header("vary", "Origin");
    reply.header("access-control-expose-headers", EXPOSED_HEADERS.join(", "));
    if (request.method !== "OPTIONS" || request.headers["access-control-request-method"] === undefined)
      return false;
    await reply
      .code(204)
      .header("access-control-allow-methods", "GET, POST, OPTIONS")
      // What the page asks for: the key is what is checked, not which headers carry it.
      .header(
        "access-control-allow-headers",
        request.headers["access-control-request-headers"] ?? ALLOWED_HEADERS.join(", "),
      )
      .header("access-control-max-age", "600")
      .send();
    return true;
  };
}
