import { readFile, stat } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { testDir } from "../../../testing/core/temp-dir";
import { FileTokenStore, SafeStorageTokenStore, type SafeStorageLike } from "./token-store";

/** A stand-in for Electron's safeStorage: reversible, but never the plain text on disk. */
function fakeSafeStorage(available = true): SafeStorageLike {
  return {
    isEncryptionAvailable: () => available,
    encryptString: (s) => Buffer.from(`enc:${Buffer.from(s).toString("base64")}`),
    decryptString: (b) => Buffer.from(b.toString().replace(/^enc:/, ""), "base64").toString(),
  };
}

describe("token stores", () => {
  it("file store: a 0600 file, deleted with null", async () => {
    const dir = testDir();
    const store = new FileTokenStore(dir);
    expect(await store.get()).toBeNull();
    await store.set("hf_abc");
    expect(await store.get()).toBe("hf_abc");
    expect((await stat(store.path)).mode & 0o777).toBe(0o600);
    await store.set(null);
    expect(await store.get()).toBeNull();
  });

  it("safeStorage store: encrypted on disk, refuses without encryption", async () => {
    const dir = testDir();
    const store = new SafeStorageTokenStore(fakeSafeStorage(), dir);
    await store.set("hf_secret");
    expect(await store.get()).toBe("hf_secret");
    expect(await readFile(store.path, "utf8")).not.toContain("hf_secret");
    expect((await stat(store.path)).mode & 0o777).toBe(0o600);
    const locked = new SafeStorageTokenStore(fakeSafeStorage(false), dir);
    await expect(locked.set("hf_x")).rejects.toThrow(/no encrypted storage/);
    expect(await locked.get()).toBeNull();
  });
});
