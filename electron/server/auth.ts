/**
 * Who may use the API: holders of the key, sent as `Authorization: Bearer K` or, for the
 * browser UI, as the HttpOnly session cookie obtained by opening `/?token=K` once.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";

export const SESSION_COOKIE = "macaron_session";

export type AuthOutcome =
  { ok: true; via: "bearer" | "cookie" } | { ok: false; status: 401 | 403; message: string };

/** Compares secrets in constant time; hashing first makes the lengths equal. */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a).digest();
  const hb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ha, hb);
}

export class ApiKeyGate {
  /** Derived from the key so that the cookie never holds the key itself, and survives restarts with the same key. */
  readonly sessionValue: string;

  constructor(private readonly apiKey: string) {
    if (apiKey.length === 0) throw new Error("The API key must not be empty");
    this.sessionValue = createHmac("sha256", apiKey).update("macaron_session:v1").digest("hex");
  }

  /** True when `candidate` is the API key. */
  keyMatches(candidate: string): boolean {
    return secretsEqual(candidate, this.apiKey);
  }

  /** Decide whether a request to /api or /v1 may proceed. */
  check(request: FastifyRequest): AuthOutcome {
    const header = request.headers.authorization;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (match?.[1] && this.keyMatches(match[1])) return { ok: true, via: "bearer" };
      return { ok: false, status: 401, message: "Invalid API key." };
    }
    const cookie = request.cookies[SESSION_COOKIE];
    if (cookie !== undefined && secretsEqual(cookie, this.sessionValue)) {
      // Browsers attach the cookie to requests other sites make (CSRF, cross-site WebSocket
      // hijacking); they also always say which site made them in Origin.
      if (!originMatchesHost(request.headers.origin, request.headers.host)) {
        return { ok: false, status: 403, message: "Cross-origin request refused." };
      }
      return { ok: true, via: "cookie" };
    }
    return {
      ok: false,
      status: 401,
      message:
        "Missing API key: send `Authorization: Bearer <key>` or open the URL with ?token=<key> printed at start-up.",
    };
  }

  /** Sets the session cookie on `reply`. */
  setSessionCookie(reply: FastifyReply): void {
    reply.setCookie(SESSION_COOKIE, this.sessionValue, { httpOnly: true, sameSite: "strict", path: "/" });
  }
}

/** No Origin header (same-origin GET, curl, non-browser clients) is fine; otherwise its host must be ours. */
export function originMatchesHost(origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined) return true;
  if (host === undefined) return false;
  try {
    return new URL(origin).host.toLowerCase() === host.toLowerCase();
  } catch {
    return false; // "null" (sandboxed frames, file://) and garbage are foreign
  }
}
