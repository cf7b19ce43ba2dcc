import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  MAX_SESSIONS,
  SERVER_KEY_FILE,
  SESSIONS_FILE,
  SESSION_TTL_MS,
  SessionStore,
  loadOrCreateServerKey,
} from "./session-store";
import { testDir } from "../../testing/core/temp-dir";

let dir: string;
beforeEach(() => {
  dir = testDir("macaron-session-store-");
});

describe("the kept server key", () => {
  it("is made once, private, and reused; --new-key replaces it", () => {
    const first = loadOrCreateServerKey(dir);
    expect(first.created).toBe(true);
    expect(first.apiKey).toMatch(/^[0-9a-f]{64}$/);
    if (process.platform !== "win32") expect(statSync(join(dir, SERVER_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(loadOrCreateServerKey(dir)).toEqual({ apiKey: first.apiKey, created: false });
    const rotated = loadOrCreateServerKey(dir, true);
    expect(rotated.created).toBe(true);
    expect(rotated.apiKey).not.toBe(first.apiKey);
    expect(loadOrCreateServerKey(dir).apiKey).toBe(rotated.apiKey);
  });

  it("replaces an empty or garbled key file instead of failing the start", () => {
    writeFileSync(join(dir, SERVER_KEY_FILE), "\n");
    expect(loadOrCreateServerKey(dir).created).toBe(true);
    writeFileSync(join(dir, SERVER_KEY_FILE), "two words\n");
    expect(loadOrCreateServerKey(dir).created).toBe(true);
  });
});

describe("browser sessions", () => {
  it("survive a new store on the same folder and key, and keep only token hashes on disk", () => {
    const token = SessionStore.inDataDir(dir, "key-a").create();
    expect(SessionStore.inDataDir(dir, "key-a").has(token)).toBe(true);
    const file = readFileSync(join(dir, SESSIONS_FILE), "utf8");
    expect(file).not.toContain(token);
    expect(file).not.toContain("key-a");
    if (process.platform !== "win32") expect(statSync(join(dir, SESSIONS_FILE)).mode & 0o777).toBe(0o600);
  });

  it("end when the key changes, when revoked, and when idle past their lifetime", () => {
    const clock = { now: 1_000 };
    const store = SessionStore.inDataDir(dir, "key-a", () => clock.now);
    const revoked = store.create();
    const idle = store.create();
    const used = store.create();
    expect(SessionStore.inDataDir(dir, "key-b").has(used)).toBe(false);
    store.revoke(revoked);
    expect(SessionStore.inDataDir(dir, "key-a").has(revoked)).toBe(false);
    clock.now += SESSION_TTL_MS - 1;
    expect(store.has(used)).toBe(true); // its use is noted: the lifetime starts again
    clock.now += 2;
    expect(store.has(idle)).toBe(false);
    expect(store.has(used)).toBe(true);
    expect(SessionStore.inDataDir(dir, "key-a", () => clock.now).has(used)).toBe(true);
  });

  it("keeps at most MAX_SESSIONS, dropping the least recently used", () => {
    const clock = { now: 0 };
    const store = SessionStore.inDataDir(dir, "k", () => clock.now);
    const tokens: string[] = [];
    for (let i = 0; i < MAX_SESSIONS + 3; i++) {
      clock.now += 1;
      tokens.push(store.create());
    }
    expect(store.size).toBe(MAX_SESSIONS);
    expect(tokens.slice(0, 3).some((t) => store.has(t))).toBe(false);
    expect(tokens.slice(3).every((t) => store.has(t))).toBe(true);
  });

  it("starts empty from a corrupt file, and does not take prototype keys for sessions", () => {
    writeFileSync(join(dir, SESSIONS_FILE), "{not json");
    const store = SessionStore.inDataDir(dir, "k");
    expect(store.size).toBe(0);
    expect(store.has("constructor")).toBe(false);
    const token = store.create();
    expect(SessionStore.inDataDir(dir, "k").has(token)).toBe(true);
  });
});
