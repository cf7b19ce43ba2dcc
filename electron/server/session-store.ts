/**
 * Headless mode's browser sessions and its API key, kept in the data folder so that a restart
 * signs nobody out.
 *
 * - The key (`server-key`, 0600) is made once and reused; `--new-key` replaces it.
 * - Each sign-in makes a random session token (the cookie's value); only its SHA-256 is stored
 *   (`server-sessions.json`, 0600), with the key's fingerprint. A file written under another
 *   key is ignored: rotating the key ends every session. Signing out removes one; sessions
 *   end after SESSION_TTL_MS, and past MAX_SESSIONS the oldest goes.
 *
 * A file that cannot be read or parsed is a fresh start (the browsers sign in again), never a
 * failed start.
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { PRIVATE_FILE_MODE, makePrivateSync } from "../../common/files/private-files";

export const SERVER_KEY_FILE = "server-key";
export const SESSIONS_FILE = "server-sessions.json";
/** A session not used for this long ends (the browser signs in again). */
export const SESSION_TTL_MS = 30 * 24 * 3600_000;
/** Sessions kept at most; a new one past this replaces the least recently used. */
export const MAX_SESSIONS = 64;
/** Last-use times are written at most this often per session (each request would be a write). */
const TOUCH_EVERY_MS = 3600_000;

const SessionsFileSchema = z.object({
  version: z.literal(1),
  keyId: z.string(),
  sessions: z.record(z.string(), z.object({ createdAt: z.number(), usedAt: z.number() })),
});
type SessionsFile = z.infer<typeof SessionsFileSchema>;

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Which key a sessions file belongs to, without storing anything the key can be found from. */
function keyIdOf(apiKey: string): string {
  return createHmac("sha256", apiKey).update("macaron_sessions:v1").digest("hex");
}

function writePrivateAtomic(path: string, text: string): void {
  const temporary = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(temporary, text, { mode: PRIVATE_FILE_MODE });
  makePrivateSync(temporary);
  renameSync(temporary, path);
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/**
 * The key in `<dataDir>/server-key`, made (64 hex characters) when there is none, when it is
 * unreadable or empty, or when `rotate`. `created` says whether this call made it.
 */
export function loadOrCreateServerKey(dataDir: string, rotate = false): { apiKey: string; created: boolean } {
  const path = join(dataDir, SERVER_KEY_FILE);
  const kept = rotate ? null : readText(path)?.trim();
  if (kept && /^\S{16,512}$/.test(kept)) return { apiKey: kept, created: false };
  const apiKey = randomBytes(32).toString("hex");
  writePrivateAtomic(path, `${apiKey}\n`);
  return { apiKey, created: true };
}

export class SessionStore {
  private readonly keyId: string;
  private sessions: SessionsFile["sessions"];

  /** `file` null: kept in memory only (a server without a data folder). */
  constructor(
    private readonly file: string | null,
    apiKey: string,
    private readonly now: () => number = Date.now,
  ) {
    this.keyId = keyIdOf(apiKey);
    this.sessions = this.load();
  }

  static inDataDir(dataDir: string, apiKey: string, now?: () => number): SessionStore {
    return new SessionStore(join(dataDir, SESSIONS_FILE), apiKey, now);
  }

  /** A new session; the returned token goes into the cookie and is not kept here. */
  create(): string {
    this.prune();
    const entries = Object.entries(this.sessions);
    if (entries.length >= MAX_SESSIONS) {
      const [oldest] = entries.sort((a, b) => a[1].usedAt - b[1].usedAt)[0]!;
      delete this.sessions[oldest];
    }
    const token = randomBytes(32).toString("base64url");
    const now = this.now();
    this.sessions[sha256(token)] = { createdAt: now, usedAt: now };
    this.save();
    return token;
  }

  /** Whether `token` is a live session (and notes its use). */
  has(token: string): boolean {
    const id = sha256(token);
    const session = Object.hasOwn(this.sessions, id) ? this.sessions[id] : undefined;
    if (!session) return false;
    const now = this.now();
    if (now - session.usedAt > SESSION_TTL_MS) {
      delete this.sessions[id];
      this.save();
      return false;
    }
    if (now - session.usedAt > TOUCH_EVERY_MS) {
      session.usedAt = now;
      this.save();
    }
    return true;
  }

  /** Ends one session (signing out); unknown tokens are ignored. */
  revoke(token: string): void {
    const id = sha256(token);
    if (!Object.hasOwn(this.sessions, id)) return;
    delete this.sessions[id];
    this.save();
  }

  get size(): number {
    return Object.keys(this.sessions).length;
  }

  private prune(): void {
    const now = this.now();
    for (const [id, session] of Object.entries(this.sessions))
      if (now - session.usedAt > SESSION_TTL_MS) delete this.sessions[id];
  }

  private load(): SessionsFile["sessions"] {
    const empty = Object.create(null) as SessionsFile["sessions"];
    if (this.file === null) return empty;
    const text = readText(this.file);
    if (text === null) return empty;
    try {
      const parsed = SessionsFileSchema.safeParse(JSON.parse(text));
      // Another key's sessions (the key was rotated): none of them is valid any more.
      if (!parsed.success || parsed.data.keyId !== this.keyId) return empty;
      return Object.assign(empty, parsed.data.sessions);
    } catch {
      return empty;
    }
  }

  private save(): void {
    if (this.file === null) return;
    const data: SessionsFile = { version: 1, keyId: this.keyId, sessions: this.sessions };
    try {
      writePrivateAtomic(this.file, JSON.stringify(data));
    } catch (err) {
      // A full disk or a read-only folder: the session still works until the server stops.
      console.error(`warning: browser sessions could not be saved: ${(err as Error).message}`);
    }
  }
}
