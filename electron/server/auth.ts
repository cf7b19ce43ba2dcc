/**
 * Who may use the API: holders of the key, sent as `Authorization: Bearer K`, and browsers
 * holding the HttpOnly session cookie. A browser gets that cookie by opening the printed URL
 * once: it carries a single-use, short-lived sign-in code, never the key, so what stays in the
 * browser's history (and in shell scroll-back, screenshots, proxies' logs) opens nothing later.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { sendApiError } from "./api-routes";
import { SessionStore } from "./session-store";

/** Prefix of the session cookie's name; the rest is per instance (see `ApiKeyGate.cookieName`). */
export const SESSION_COOKIE_PREFIX = "macaron_session_";

/** How long a printed sign-in code stays valid: long enough to copy it into a browser. */
export const LOGIN_CODE_TTL_MS = 5 * 60_000;

/** Codes not yet used; past this many the oldest is dropped (a key holder looping cannot grow memory). */
const MAX_LIVE_CODES = 64;

export type AuthOutcome =
  { ok: true; via: "bearer" | "cookie" } | { ok: false; status: 401 | 403; message: string };

/** Compares secrets in constant time; hashing first makes the lengths equal. */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a).digest();
  const hb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ha, hb);
}

function digest(code: string): string {
  return createHash("sha256").update(code).digest("hex");
}

export interface IssuedCode {
  code: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/**
 * Single-use sign-in codes (32 random bytes), each valid for `ttlMs`. Only their hashes are
 * kept, so the lookup's timing says nothing about a code.
 */
export class LoginCodes {
  private readonly live = new Map<string, number>();

  constructor(
    readonly ttlMs: number = LOGIN_CODE_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  issue(): IssuedCode {
    this.prune();
    if (this.live.size >= MAX_LIVE_CODES) this.live.delete(this.live.keys().next().value!);
    const code = randomBytes(32).toString("base64url");
    const expiresAt = this.now() + this.ttlMs;
    this.live.set(digest(code), expiresAt);
    return { code, expiresAt };
  }

  /** True once for a live code; the code is spent either way. */
  redeem(code: string): boolean {
    const key = digest(code);
    const expiresAt = this.live.get(key);
    this.live.delete(key);
    return expiresAt !== undefined && this.now() < expiresAt;
  }

  private prune(): void {
    const now = this.now();
    for (const [key, expiresAt] of this.live) if (expiresAt <= now) this.live.delete(key);
  }
}

/** Told to anyone who puts the key in a URL. */
export const KEY_IN_URL_MESSAGE =
  "The API key must not be sent in a URL (it would stay in the browser's history): open the sign-in URL " +
  "with ?code= printed at start-up, or send the key as `Authorization: Bearer <key>`.";

/** Told to a browser whose sign-in code is spent, expired or unknown. */
export const CODE_REFUSED_MESSAGE =
  `This sign-in code is not valid: each code works once, within ${LOGIN_CODE_TTL_MS / 60_000} minutes. ` +
  "Get a new one by restarting the server, or with " +
  '`curl -X POST -H "Authorization: Bearer <key>" <server>/api/login-code`.';

export class ApiKeyGate {
  /**
   * Cookies are per host, not per port: every server on 127.0.0.1 would share one cookie name,
   * and signing in to one would sign the others out. The name is derived from the key, so
   * instances with different keys keep separate cookies.
   */
  readonly cookieName: string;

  /**
   * `sessions`: where sign-ins are kept (session-store.ts); headless mode keeps them in the data
   * folder so that they survive a restart. Default: in memory.
   */
  constructor(
    private readonly apiKey: string,
    readonly sessions: SessionStore = new SessionStore(null, apiKey),
  ) {
    if (apiKey.length === 0) throw new Error("The API key must not be empty");
    this.cookieName =
      SESSION_COOKIE_PREFIX +
      createHmac("sha256", apiKey).update("macaron_session_name:v1").digest("hex").slice(0, 16);
  }

  /** True when `candidate` is the API key. */
  keyMatches(candidate: string): boolean {
    return secretsEqual(candidate, this.apiKey);
  }

  /** True when the request carries this instance's session cookie (Origin not considered). */
  hasSession(request: FastifyRequest): boolean {
    const cookie = request.cookies[this.cookieName];
    return cookie !== undefined && this.sessions.has(cookie);
  }

  /** Decide whether a request to /api or /v1 may proceed. */
  check(request: FastifyRequest): AuthOutcome {
    const header = request.headers.authorization;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (match?.[1] && this.keyMatches(match[1])) return { ok: true, via: "bearer" };
      return { ok: false, status: 401, message: "Invalid API key." };
    }
    // Anthropic's clients send the key as `x-api-key` (a header no cross-site form can set).
    const apiKeyHeader = request.headers["x-api-key"];
    if (apiKeyHeader !== undefined) {
      if (typeof apiKeyHeader === "string" && this.keyMatches(apiKeyHeader.trim()))
        return { ok: true, via: "bearer" };
      return { ok: false, status: 401, message: "Invalid API key." };
    }
    if (this.hasSession(request)) {
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
        "Not signed in: open the sign-in URL the server printed at start-up (its ?code= works once, " +
        `within ${LOGIN_CODE_TTL_MS / 60_000} minutes), or send the API key as \`Authorization: Bearer <key>\`.`,
    };
  }

  /** Sets the session cookie on `reply`. */
  setSessionCookie(reply: FastifyReply): void {
    reply.setCookie(this.cookieName, this.sessions.create(), {
      httpOnly: true,
      sameSite: "strict",
      path: "/",
    });
  }

  /** Ends the request's session, if it has one, and clears its cookie. */
  signOut(request: FastifyRequest, reply: FastifyReply): void {
    const cookie = request.cookies[this.cookieName];
    if (cookie !== undefined) this.sessions.revoke(cookie);
    reply.clearCookie(this.cookieName, { httpOnly: true, sameSite: "strict", path: "/" });
  }
}

/** What the URL's credentials ask of a request, decided before any route runs. */
export type LoginStep =
  | { kind: "none" }
  | { kind: "refuse"; status: 400 | 401; message: string }
  /** Sign-in done (or already signed in): set the cookie when `setCookie`, then redirect. */
  | { kind: "redirect"; target: string; setCookie: boolean };

/**
 * `?token=` anywhere is refused without looking at it (the key never belongs in a URL, right or
 * wrong). `?code=` on a page GET is exchanged for the session cookie, then the browser is sent
 * to the same URL without it; a browser already signed in is just sent on (reopening the link
 * from history), and its code stays unspent.
 */
export function loginStep(
  request: FastifyRequest,
  path: string,
  isPage: boolean,
  gate: ApiKeyGate,
  codes: LoginCodes,
): LoginStep {
  const q = request.url.indexOf("?");
  if (q === -1) return { kind: "none" };
  const query = new URLSearchParams(request.url.slice(q + 1));
  if (query.has("token")) return { kind: "refuse", status: 400, message: KEY_IN_URL_MESSAGE };
  const code = query.get("code");
  if (!isPage || request.method !== "GET" || code === null) return { kind: "none" };
  query.delete("code");
  const rest = query.toString();
  // One leading slash only: "//evil.example" would be a protocol-relative redirect.
  const target = "/" + path.replace(/^[/\\]+/, "") + (rest ? `?${rest}` : "");
  if (gate.hasSession(request)) return { kind: "redirect", target, setCookie: false };
  if (!codes.redeem(code)) return { kind: "refuse", status: 401, message: CODE_REFUSED_MESSAGE };
  return { kind: "redirect", target, setCookie: true };
}

/**
 * `POST /api/login-code` (register it where the key is checked): a fresh sign-in code and URL
 * for a key holder, e.g. to open the UI on a server started a while ago. Only the key itself
 * may ask: a browser session has nothing to hand a code to. `POST /api/sign-out` ends the
 * calling browser's session.
 */
export function registerLoginCodeRoute(api: FastifyInstance, codes: LoginCodes, gate: ApiKeyGate): void {
  // Signs this browser out: its session ends here and on every later start (other browsers keep theirs).
  api.post("/api/sign-out", (request, reply) => {
    gate.signOut(request, reply);
    return reply.send({ ok: true, value: null });
  });
  api.post("/api/login-code", (request, reply) => {
    if (request.headers.authorization === undefined)
      return sendApiError(
        reply,
        "forbidden",
        "Only the API key (Authorization: Bearer) can create sign-in codes.",
        403,
      );
    const issued = codes.issue();
    const url = `${request.protocol}://${request.headers.host ?? request.hostname}/?code=${issued.code}`;
    return reply.send({ ok: true, value: { ...issued, url } });
  });
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
