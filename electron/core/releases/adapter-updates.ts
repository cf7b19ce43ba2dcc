import { createHash } from "node:crypto";
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
import { RegistryIndex, type RegistryEntry } from "../../../common/registry-protocol";
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
}

interface Stored {
  autoUpdate: boolean;
  registryUrl: string | null;
  intervalMinutes: number;
  lastCheckAt: number | null;
  lastError: string | null;
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
    const stored = { ...DEFAULTS, ...(this.deps.settings.get(SETTINGS_KEY) as Partial<Stored> | undefined) };
    return { ...stored, registryUrl: this.deps.fixedRegistryUrl ?? stored.registryUrl };
  }

  /** Change the settings; the poll timer follows them. */
  configure(
    change: Partial<Pick<UpdateSettings, "autoUpdate" | "registryUrl" | "intervalMinutes">>,
  ): UpdateSettings {
    if (change.registryUrl) checkUrl(change.registryUrl);
    const current = { ...DEFAULTS, ...(this.deps.settings.get(SETTINGS_KEY) as Partial<Stored> | undefined) };
    this.deps.settings.set(SETTINGS_KEY, {
      ...current,
      ...change,
      registryUrl: change.registryUrl?.replace(/\/+$/, "") ?? current.registryUrl,
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
    const checkedAt = this.now();
    this.progress({ state: "checking" });
    let available: RegistryEntry[];
    try {
      available = this.newer(await this.fetchIndex(url));
      this.remember({ lastCheckAt: checkedAt, lastError: null });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.remember({ lastCheckAt: checkedAt, lastError: message });
      this.progress({ state: "failed", message });
      throw new ApiError("internal", `Could not check for updates at ${url}: ${message}`);
    }
    for (const e of available)
      this.progress({ state: "available", adapterId: e.id, version: e.version, totalBytes: e.sizeBytes });
    const run = (this.running ??= this.process(url, available).finally(() => {
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
      results,
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

  private async fetchIndex(url: string): Promise<RegistryIndex> {
    const res = await fetch(`${url}/v1/registry/index.json`, { signal: AbortSignal.timeout(30_000) });
    if (!res.ok) throw new Error(`the registry answered ${res.status}`);
    const parsed = RegistryIndex.safeParse(await res.json());
    if (!parsed.success)
      throw new Error(`the registry index is malformed: ${parsed.error.issues[0]?.message ?? ""}`);
    return parsed.data;
  }

  /** Versions newer than the live one of each installed adapter, not seen before, oldest first. */
  private newer(index: RegistryIndex): RegistryEntry[] {
    const { store } = this.deps;
    return index.adapters
      .filter((e) => {
        const live = store.live(e.id);
        return (
          live !== null &&
          compareVersions(e.version, live.version) > 0 &&
          store.version(e.id, e.version) === null
        );
      })
      .sort((a, b) => a.id.localeCompare(b.id) || compareVersions(a.version, b.version));
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
      await this.download(new URL(e.url, `${url}/`).href, partial, e);
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

function checkUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ApiError("invalid_input", `"${url}" is not a URL.`);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    throw new ApiError("invalid_input", "The registry must be an http(s) URL.");
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
