/** Install tokens and the admin key: random secrets, stored and compared only as hashes. */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A new random bearer token (256 bits). */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** What the database keeps instead of the token: a leak of the file does not leak tokens. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** The token of an `Authorization: Bearer …` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return m ? m[1]! : null;
}

/** Constant-time comparison of a presented secret with the expected one. */
export function sameSecret(presented: string, expected: string): boolean {
  return timingSafeEqual(
    createHash("sha256").update(presented).digest(),
    createHash("sha256").update(expected).digest(),
  );
}
