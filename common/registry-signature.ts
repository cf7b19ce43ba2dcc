/**
 * Signatures of adapter registry entries (Ed25519, Node's crypto): the publisher (the cloud
 * service) signs each entry when it is published; the app verifies every entry with the public
 * key it pinned for that registry and refuses entries that are unsigned or signed by another key.
 *
 * What is signed is the entry as it travels, minus `signature`, as canonical JSON (object keys
 * sorted at every level, no whitespace) after a fixed context line: a field the app does not
 * know yet is still covered, and no field can be moved, added or removed unnoticed.
 * Public keys travel as the 32 raw bytes, base64url (43 characters).
 */
import { createPublicKey, sign, verify, type KeyObject } from "node:crypto";

const CONTEXT = "macaron-registry-entry/1\n";

/** JSON with sorted object keys and no whitespace; undefined members are left out (as JSON does). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    const s = JSON.stringify(value);
    if (s === undefined) throw new Error("canonicalJson: not a JSON value");
    return s;
  }
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const members = Object.keys(obj)
    .sort()
    .filter((k) => obj[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`);
  return `{${members.join(",")}}`;
}

/** The bytes an entry's signature covers. */
export function entryPayload(entry: Record<string, unknown>): Buffer {
  const { signature: _signature, ...signed } = entry;
  return Buffer.from(CONTEXT + canonicalJson(signed), "utf8");
}

/** The signature (base64url) of an entry, by an Ed25519 private key. */
export function signEntry(entry: Record<string, unknown>, privateKey: KeyObject): string {
  return sign(null, entryPayload(entry), privateKey).toString("base64url");
}

/** An Ed25519 public key as 32 raw bytes, base64url. */
export function exportPublicKey(key: KeyObject): string {
  const jwk = key.export({ format: "jwk" });
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.x !== "string")
    throw new Error("not an Ed25519 key");
  return jwk.x;
}

/** The public key of 32 raw bytes, base64url; throws with a readable reason otherwise. */
export function importPublicKey(raw: string): KeyObject {
  if (!/^[A-Za-z0-9_-]{43}$/.test(raw) || Buffer.from(raw, "base64url").length !== 32)
    throw new Error("a registry key is an Ed25519 public key: 32 bytes, base64url (43 characters)");
  return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: raw }, format: "jwk" });
}

export type EntryVerdict = "signed" | "unsigned" | "bad-signature";

/** Checks one entry as received (the raw JSON object, unknown fields included). */
export function verifyEntry(raw: unknown, publicKey: KeyObject): EntryVerdict {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return "unsigned";
  const entry = raw as Record<string, unknown>;
  if (typeof entry.signature !== "string" || entry.signature.length === 0) return "unsigned";
  const sig = Buffer.from(entry.signature, "base64url");
  if (sig.length !== 64) return "bad-signature";
  try {
    return verify(null, entryPayload(entry), publicKey, sig) ? "signed" : "bad-signature";
  } catch {
    return "bad-signature";
  }
}
