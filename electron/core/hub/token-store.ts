/**
 * Where the Hugging Face access token is kept: only on this machine. Headless: a 0600 file in
 * the data folder. Electron: a file encrypted with `safeStorage` (the OS keychain's key), which
 * electron/main passes into core as `tokenStore`. The API never returns the token itself.
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

export type TokenStorage = "safeStorage" | "file";

export interface TokenStore {
  readonly storage: TokenStorage;
  get(): Promise<string | null>;
  /** Store `token`, or delete it with null. */
  set(token: string | null): Promise<void>;
}

async function writePrivate(path: string, data: string | Buffer): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, data, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, path);
}

async function readOrNull(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/** The headless store: `<dataDir>/hub-token`, mode 0600. */
export class FileTokenStore implements TokenStore {
  readonly storage = "file" as const;
  readonly path: string;

  constructor(dataDir: string) {
    this.path = join(dataDir, "hub-token");
  }

  async get(): Promise<string | null> {
    const raw = await readOrNull(this.path);
    const token = raw?.toString("utf8").trim();
    return token ? token : null;
  }

  async set(token: string | null): Promise<void> {
    if (token === null) return rm(this.path, { force: true });
    await writePrivate(this.path, `${token.trim()}\n`);
  }
}

/** The part of Electron's `safeStorage` the store uses (so that it is testable without Electron). */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plainText: string): Buffer;
  decryptString(encrypted: Buffer): string;
}

/**
 * The desktop store: the token encrypted with `safeStorage` in `<dir>/hub-token.enc` (0600).
 * Where the OS offers no encryption (a Linux session without a keyring) it refuses to store
 * rather than keep the token in plain text.
 */
export class SafeStorageTokenStore implements TokenStore {
  readonly storage = "safeStorage" as const;
  readonly path: string;

  constructor(
    private readonly safe: SafeStorageLike,
    dir: string,
  ) {
    this.path = join(dir, "hub-token.enc");
  }

  async get(): Promise<string | null> {
    const raw = await readOrNull(this.path);
    if (!raw || raw.length === 0) return null;
    if (!this.safe.isEncryptionAvailable()) return null;
    try {
      return this.safe.decryptString(raw) || null;
    } catch {
      // Encrypted under another OS account or keyring: unusable, as if none were stored.
      return null;
    }
  }

  async set(token: string | null): Promise<void> {
    if (token === null) return rm(this.path, { force: true });
    if (!this.safe.isEncryptionAvailable()) {
      throw new Error(
        "This system offers no encrypted storage (no keyring), so the access token cannot be stored safely.",
      );
    }
    await writePrivate(this.path, this.safe.encryptString(token.trim()));
  }
}
