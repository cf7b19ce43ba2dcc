import { createHash, type KeyObject } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  ApiError,
  type UpdateCheck,
  type UpdateOutcome,
  type UpdateProgress,
  type UpdateSettings,
} from "../../api";
import {
  fitsBase,
  INDEX_BASE_PARAM,
  RegistryIndex,
  RegistryPublicKey,
  type RegistryEntry,
} from "../../../common/registry-protocol";
import { importPublicKey, verifyEntry } from "../../../common/registry-signature";
import type { ManifestFile } from "../../../common/adapter-manifest";
import type { Log } from "../dispatch";
import type { EventBus } from "../events/event-bus";
import type { SettingsStore } from "../settings/settings-store";
import type { AdapterReleases } from "./adapter-releases";
import type { ReleaseStore } from "./release-store";
import { compareVersions } from "./version-info";

export const REGISTRY_URL_ENV = "MACARON_REGISTRY_URL";
const SETTINGS_KEY = "updates";

export interface AdapterUpdatesDeps {
  releases: AdapterReleases;
  store: ReleaseStore;
  settings: SettingsStore;
  events: EventBus;
  /** Partial downloads go to `<adaptersDir>/.partial` (same filesystem as the installed copies). */
  adaptersDir: string;
  /** A registry given at start-up (--registry / $MACARON_REGISTRY_URL); wins over the setting. */
  fixedRegistryUrl?: string;
  log: Log;
  now?: () => number;
  /** First automatic check after start-up, ms (default 30 s). */
  initialDelayMs?: number;
  /**
   * The loaded base file's sha256 (null: none loaded or not hashed yet). The registry is asked
   * for this base's versions only; another base's are never offered, whatever the registry sends.
   */
  baseSha256?: () => string | null;
}

interface Stored {
  autoUpdate: boolean;
  registryUrl: string | null;
  intervalMinutes: number;
  lastCheckAt: number | null;
  lastError: string | null;
  /**
   * Keys pinned on first use for registries on this machine (loopback, no key in the URL),
   * by registry base URL. Setting the registry URL again forgets its pin.
   */
  pinnedKeys?: Record<string, string>;
}

const DEFAULTS: Stored = {
  autoUpdate: true,
  registryUrl: null,
  intervalMinutes: 360,
  lastCheckAt: null,
  lastError: null,
};

/**
 * New adapter versions from the registry: polls its index (on an interval when automatic
 * updates are on, and on demand), downloads each newer version of an installed adapter into
 * `.partial/` (resuming with HTTP Range), checks its sha256, stages it (validation against the
 * base) and puts it through the gate. Nothing reaches the live set without passing all three.
 */
export class AdapterUpdates {
  private running: Promise<UpdateOutcome[]> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly deps: AdapterUpdatesDeps) {
    this.now = deps.now ?? Date.now;
  }

  settings(): UpdateSettings {
    const { pinnedKeys: _pinned, ...stored } = {
      ...DEFAULTS,
      ...(this.deps.settings.get(SETTINGS_KEY) as Partial<Stored> | undefined),
    };
    return { ...stored, registryUrl: this.deps.fixedRegistryUrl ?? stored.registryUrl };
  }

  /** Change the settings; the poll timer follows them. */
  configure(
    change: Partial<Pick<UpdateSettings, "autoUpdate" | "registryUrl" | "intervalMinutes">>,
  ): UpdateSettings {
    const target = change.registryUrl ? parseRegistryUrl(change.registryUrl) : null;
    const current = { ...DEFAULTS, ...(this.deps.settings.get(SETTINGS_KEY) as Partial<Stored> | undefined) };
    const pinnedKeys = { ...current.pinnedKeys };
    if (target) delete pinnedKeys[target.base];
    this.deps.settings.set(SETTINGS_KEY, {
      ...current,
      ...change,
      registryUrl: target ? registryUrlOf(target) : (change.registryUrl ?? current.registryUrl),
      pinnedKeys,
    });
    this.schedule();
    return this.settings();
  }

  /** Start polling (when automatic updates are on and a registry is set). */
  start(): void {
    this.schedule(this.deps.initialDelayMs ?? 30_000);
  }

  /**
   * Fetch the index and list what is new; the downloads and gates then run in the background,
   * or before this resolves with `wait`. One check at a time: a second call joins the first.
   */
  async check(opts: { wait?: boolean } = {}): Promise<UpdateCheck> {
    const url = this.settings().registryUrl;
    if (!url)
      throw new ApiError("invalid_input", "No update registry is set. Set one in the update settings first.");
    const target = parseRegistryUrl(url);
    const checkedAt = this.now();
    this.progress({ state: "checking" });
    let available: RegistryEntry[];
    const refusals: UpdateOutcome[] = [];
    try {
      const key = target.key ? importPublicKey(target.key) : await this.loopbackKey(target.base);
      const { entries, refused } = await this.fetchIndex(target.base, key);
      available = this.newer(entries);
      // Refused entries matter only where they would have been an update.
      for (const { entry, reason } of this.newerRefused(refused)) {
        const message = `refused: ${reason}`;
        refusals.push({ adapterId: entry.id, version: entry.version, outcome: "failed", message });
        this.progress({ state: "failed", adapterId: entry.id, version: entry.version, message });
        this.deps.log(`update ${entry.id} ${entry.version} ${message}`, null);
      }
      this.remember({
        lastCheckAt: checkedAt,
        lastError:
          refusals.length > 0
            ? `${refusals.length} registry ${refusals.length === 1 ? "entry" : "entries"} refused: ${refusals[0]!.message}`
            : null,
      });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.remember({ lastCheckAt: checkedAt, lastError: message });
      this.progress({ state: "failed", message });
      throw new ApiError("internal", `Could not check for updates at ${url}: ${message}`);
    }
    for (const e of available)
      this.progress({ state: "available", adapterId: e.id, version: e.version, totalBytes: e.sizeBytes });
    const run = (this.running ??= this.process(target.base, available).finally(() => {
      this.running = null;
      this.progress({ state: "idle" });
    }));
    const results = opts.wait ? await run : [];
    return {
      checkedAt,
      available: available.map((e) => ({
        adapterId: e.id,
        version: e.version,
        sizeBytes: e.sizeBytes,
        releaseNotes: e.releaseNotes,
      })),
      results: [...refusals, ...results],
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  private schedule(delayMs?: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const s = this.settings();
    if (this.closed || !s.autoUpdate || !s.registryUrl) return;
    this.timer = setTimeout(
      () => {
        this.check().catch((err: unknown) => this.deps.log("automatic update check failed", err));
        this.schedule();
      },
      delayMs ?? s.intervalMinutes * 60_000,
    );
    this.timer.unref();
  }

  /**
   * The index, its entries split into those signed by `key` and those refused (unsigned or
   * signed by another key). Redirects are refused: the index comes from the registry itself.
   */
  private async fetchIndex(
    base: string,
    key: KeyObject,
  ): Promise<{ entries: RegistryEntry[]; refused: { entry: RegistryEntry; reason: string }[] }> {
    const forBase = this.deps.baseSha256?.() ?? null;
    const where = new URL(`${base}/v1/registry/index.json`);
    if (forBase) where.searchParams.set(INDEX_BASE_PARAM, forBase);
    const res = await fetch(where, {
      signal: AbortSignal.timeout(30_000),
      redirect: "error",
    });
    if (!res.ok) throw new Error(`the registry answered ${res.status}`);
    const json = (await res.json()) as { adapters?: unknown };
    const parsed = RegistryIndex.safeParse(json);
    if (!parsed.success)
      throw new Error(`the registry index is malformed: ${parsed.error.issues[0]?.message ?? ""}`);
    // Verified as received (the raw JSON, fields this build does not know included).
    const raws = json.adapters as unknown[];
    const entries: RegistryEntry[] = [];
    const refused: { entry: RegistryEntry; reason: string }[] = [];
    parsed.data.adapters.forEach((entry, i) => {
      // A registry that ignores ?base= (an older service) still sends every base's versions.
      if (forBase && !fitsBase(entry, forBase)) return;
      const verdict = verifyEntry(raws[i], key);
      if (verdict === "signed") entries.push(entry);
      else
        refused.push({
          entry,
          reason:
            verdict === "unsigned"
              ? "the registry entry is not signed"
              : "the registry entry's signature does not match the registry's pinned key",
        });
    });
    return { entries, refused };
  }

  /**
   * The key of a registry on this machine given without one: fetched once from the registry
   * and pinned (trust on first use, loopback only; parseRegistryUrl requires the key in the URL
   * for any other host). A later change of key is refused until the URL is set again.
   */
  private async loopbackKey(base: string): Promise<KeyObject> {
    const stored = { ...DEFAULTS, ...(this.deps.settings.get(SETTINGS_KEY) as Partial<Stored> | undefined) };
    const pinned = stored.pinnedKeys?.[base];
    if (pinned) return importPublicKey(pinned);
    const res = await fetch(`${base}/v1/registry/public-key`, {
      signal: AbortSignal.timeout(30_000),
      redirect: "error",
    });
    if (!res.ok) throw new Error(`the registry's public key: HTTP ${res.status}`);
    const { key } = RegistryPublicKey.parse(await res.json());
    const imported = importPublicKey(key);
    this.remember({ pinnedKeys: { ...stored.pinnedKeys, [base]: key } });
    return imported;
  }

  /** Versions newer than the live one of each installed adapter, not seen before, oldest first. */
  private newer(entries: RegistryEntry[]): RegistryEntry[] {
    return entries.filter((e) => this.isUpdate(e)).sort(byIdVersion);
  }

  private newerRefused<T extends { entry: RegistryEntry }>(refused: T[]): T[] {
    return refused.filter((r) => this.isUpdate(r.entry)).sort((a, b) => byIdVersion(a.entry, b.entry));
  }

  private isUpdate(e: RegistryEntry): boolean {
    const { store } = this.deps;
    const live = store.live(e.id);
    return (
      live !== null && compareVersions(e.version, live.version) > 0 && store.version(e.id, e.version) === null
    );
  }

  private async process(url: string, entries: RegistryEntry[]): Promise<UpdateOutcome[]> {
    const outcomes: UpdateOutcome[] = [];
    for (const e of entries) {
      if (this.closed) break;
      outcomes.push(await this.processOne(url, e));
    }
    return outcomes;
  }

  private async processOne(url: string, e: RegistryEntry): Promise<UpdateOutcome> {
    const outcome = (o: UpdateOutcome["outcome"], message: string | null): UpdateOutcome => ({
      adapterId: e.id,
      version: e.version,
      outcome: o,
      message,
    });
    const partial = join(
      this.deps.adaptersDir,
      ".partial",
      `${e.id}-${e.version}-${e.sha256.slice(0, 12)}.part`,
    );
    try {
      const href = new URL(e.url, `${url}/`);
      if (!allowedTransport(href))
        throw new ApiError(
          "invalid_input",
          `the file's URL ${href.origin} is not https (plain http only to this machine)`,
        );
      await this.download(href.href, partial, e);
      this.progress({ state: "verifying", adapterId: e.id, version: e.version });
      const sha256 = await sha256Of(partial);
      if (sha256 !== e.sha256) {
        // A damaged or substituted file is never staged; the next check downloads it afresh.
        await rm(partial, { force: true });
        throw new ApiError(
          "invalid_input",
          `sha256 mismatch: got ${sha256.slice(0, 12)}…, the index says ${e.sha256.slice(0, 12)}…`,
        );
      }
      await this.deps.releases.stage(partial, toManifest(e), "registry", e.releaseNotes);
      await rm(partial, { force: true });
      this.progress({ state: "staged", adapterId: e.id, version: e.version });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // Validation refusals are final for this file: drop it (a partial download is kept to resume).
      if (err instanceof ApiError && err.code === "invalid_input") await rm(partial, { force: true });
      this.progress({ state: "failed", adapterId: e.id, version: e.version, message });
      this.deps.log(`update ${e.id} ${e.version} refused: ${message}`, null);
      return outcome("failed", message);
    }
    try {
      const decided = await this.deps.releases.gate(e.id, e.version);
      return outcome(
        decided.live ? "promoted" : decided.status === "rejected" ? "rejected" : "staged",
        decided.statusReason,
      );
    } catch (err) {
      return outcome("staged", err instanceof Error ? err.message : String(err));
    }
  }

  /** Download into `partial`, resuming from its current size with a Range request. */
  private async download(href: string, partial: string, e: RegistryEntry): Promise<void> {
    await mkdir(join(this.deps.adaptersDir, ".partial"), { recursive: true });
    let have = (await stat(partial).catch(() => null))?.size ?? 0;
    if (have > e.sizeBytes) {
      await rm(partial, { force: true });
      have = 0;
    }
    if (have === e.sizeBytes) return;
    const res = await fetch(href, {
      headers: have > 0 ? { range: `bytes=${have}-` } : {},
      signal: AbortSignal.timeout(10 * 60_000),
    });
    if (res.status !== 200 && res.status !== 206)
      throw new Error(`download of ${e.id} ${e.version} failed: HTTP ${res.status}`);
    // 200 to a Range request: the server sent the whole file; start over.
    const append = res.status === 206 && have > 0;
    if (!append) have = 0;
    const out = createWriteStream(partial, { flags: append ? "a" : "w" });
    const downloading = (receivedBytes: number): void =>
      this.progress({
        state: "downloading",
        adapterId: e.id,
        version: e.version,
        receivedBytes,
        totalBytes: e.sizeBytes,
      });
    let last = 0;
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        if (!out.write(chunk)) await new Promise<void>((r) => out.once("drain", () => r()));
        have += chunk.length;
        if (have > e.sizeBytes)
          throw new Error(`the download of ${e.id} ${e.version} is larger than the index says`);
        if (this.now() - last > 200) {
          last = this.now();
          downloading(have);
        }
      }
    } finally {
      await new Promise<void>((resolve, reject) =>
        out.end((err?: Error | null) => (err ? reject(err) : resolve())),
      );
    }
    downloading(have);
    if (have !== e.sizeBytes)
      throw new Error(`the download of ${e.id} ${e.version} ended at ${have} of ${e.sizeBytes} bytes`);
  }

  private remember(change: Partial<Stored>): void {
    const current = { ...DEFAULTS, ...(this.deps.settings.get(SETTINGS_KEY) as Partial<Stored> | undefined) };
    this.deps.settings.set(SETTINGS_KEY, { ...current, ...change });
  }

  private progress(p: Partial<UpdateProgress> & Pick<UpdateProgress, "state">): void {
    this.deps.events.emit("adapters.updates", {
      adapterId: null,
      version: null,
      receivedBytes: null,
      totalBytes: null,
      message: null,
      ...p,
    });
  }
}

function toManifest(e: RegistryEntry): ManifestFile {
  return {
    id: e.id,
    name: e.name,
    domain: e.domain,
    version: e.version,
    description: e.description,
    sha256: e.sha256,
    sizeBytes: e.sizeBytes,
    base: { ...e.base, baseName: e.base.baseName ?? null },
    defaultScale: e.defaultScale,
    routingExamples: e.routingExamples,
    lineage: e.lineage,
  };
}

function byIdVersion(a: RegistryEntry, b: RegistryEntry): number {
  return a.id.localeCompare(b.id) || compareVersions(a.version, b.version);
}

/** A registry: its base URL and the publisher key pinned with it (null: loopback, pinned on first use). */
export interface RegistryTarget {
  base: string;
  key: string | null;
}

/** localhost, 127.0.0.0/8 and ::1: this machine. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** https anywhere; plain http only to this machine (anything else can be read or changed on the way). */
function allowedTransport(url: URL): boolean {
  return url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
}

/**
 * `https://host/path#key=<publisher's public key>`: the key (32 bytes, base64url; the service
 * prints it at start and serves it at /v1/registry/public-key) travels with the URL, so a
 * self-hosted registry is pinned by whoever gives the app its address. Plain http only to
 * this machine, where the key may also be left out (fetched once and pinned).
 */
export function parseRegistryUrl(url: string): RegistryTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ApiError("invalid_input", `"${url}" is not a URL.`);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    throw new ApiError("invalid_input", "The registry must be an http(s) URL.");
  if (!allowedTransport(parsed))
    throw new ApiError(
      "invalid_input",
      "The registry must use https; plain http is allowed only to this machine (localhost, 127.0.0.1, ::1).",
    );
  let key: string | null = null;
  if (parsed.hash) {
    const m = /^#key=([^&]*)$/.exec(parsed.hash);
    if (!m)
      throw new ApiError(
        "invalid_input",
        "The registry URL's fragment must be #key=<publisher's public key>.",
      );
    try {
      importPublicKey(m[1]!);
    } catch (err) {
      throw new ApiError("invalid_input", `The registry URL's key is not usable: ${(err as Error).message}.`);
    }
    key = m[1]!;
  } else if (!isLoopbackHost(parsed.hostname))
    throw new ApiError(
      "invalid_input",
      "A registry on another machine needs its publisher's public key: give it as <url>#key=<key> (the service prints it at start).",
    );
  if (parsed.search) throw new ApiError("invalid_input", "The registry URL must not have a query.");
  const base = `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, "");
  return { base, key };
}

/** The URL a target is stored and shown as. */
function registryUrlOf(t: RegistryTarget): string {
  return t.key ? `${t.base}#key=${t.key}` : t.base;
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
