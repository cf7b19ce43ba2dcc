/** Serves the renderer build (out/renderer) as a single-page app, with browser security headers. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

export const UI_NOT_BUILT = "UI not built: run npm run build";

/** Only a plain host[:port] may be echoed into the CSP; anything else falls back to 'self'. */
function safeHost(host: string | undefined): string | null {
  return host !== undefined && /^[A-Za-z0-9.\-:[\]]{1,255}$/.test(host) ? host : null;
}

/** The UI talks only to this server: its own scripts, its own API and its own WebSocket. */
export function contentSecurityPolicy(host: string | undefined): string {
  const h = safeHost(host);
  const connect = h ? `'self' ws://${h} wss://${h}` : "'self'";
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    `connect-src ${connect}`,
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
  ].join("; ");
}

/** The browser security headers every response carries (set by app.ts, framework errors included). */
export function securityHeaders(host: string | undefined): Record<string, string> {
  return {
    "content-security-policy": contentSecurityPolicy(host),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
  };
}

function isApiPath(path: string): boolean {
  return path === "/api" || path.startsWith("/api/") || path === "/v1" || path.startsWith("/v1/");
}

function wantsPage(request: FastifyRequest): boolean {
  return (
    (request.method === "GET" || request.method === "HEAD") && !isApiPath(request.url.split("?")[0] ?? "")
  );
}

/**
 * Registers the static files, the SPA fallback (unknown page paths get index.html so client
 * routes survive a reload). `onApiNotFound` answers unknown API paths in
 * that API's error shape.
 */
export async function registerStaticUi(
  app: FastifyInstance,
  rendererDir: string,
  onApiNotFound: (request: FastifyRequest, reply: FastifyReply) => FastifyReply,
): Promise<void> {
  const built = existsSync(join(rendererDir, "index.html"));
  if (built) {
    await app.register(fastifyStatic, { root: rendererDir, prefix: "/", dotfiles: "ignore" });
  }

  app.setNotFoundHandler((request, reply) => {
    if (!wantsPage(request)) {
      if (isApiPath(request.url)) return onApiNotFound(request, reply);
      return reply.code(404).type("text/plain; charset=utf-8").send("Not found");
    }
    if (!built) return reply.code(503).type("text/plain; charset=utf-8").send(UI_NOT_BUILT);
    // index.html must be revalidated: it names the hashed asset files of the current build.
    return reply.header("cache-control", "no-cache").sendFile("index.html");
  });
}
