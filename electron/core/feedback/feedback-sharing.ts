/**
 * The feedback domain as core runs it: capture (FeedbackService), consent (PrivacySettingsService),
 * the outbox, and the upload (FeedbackSync) — built on the app's database and scheduled so that
 * the chat never waits on any of it. Uploads happen only with consent AND an explicit endpoint
 * (feedback-endpoint.ts): after a new item (debounced), periodically, at start-up when items wait,
 * and on "Sync now"; never on the chat path.
 */
import type { Database } from "better-sqlite3";
import type { ToolDefinitionWire } from "../../../common/feedback-protocol";
import { ApiError, type PrivacyState, type SharingLevel, type SyncStatus, type ToolStep } from "../../api";
import type { ConversationRepository } from "../conversations/conversation-repository";
import { MessageStore } from "../conversations/message-store";
import type { Log } from "../dispatch";
import type { EventBus } from "../events/event-bus";
import { SettingsStore } from "../settings/settings-store";
import { resolveFeedbackEndpoint, type ResolvedEndpoint } from "./feedback-endpoint";
import { FeedbackService, type FeedbackRecord } from "./feedback-service";
import { MessageContext } from "./message-context";
import { PrivacySettingsService } from "./privacy-settings";
import { SqliteOutbox } from "./sqlite-outbox";
import { FeedbackSync, type SyncStatus as EngineSyncStatus } from "./sync/feedback-sync";

export interface FeedbackSharingDeps {
  db: Database;
  /** The conversation repository (core's one); default: one on `db`. */
  messages?: ConversationRepository;
  events: EventBus;
  log: Log;
  /** MACARON_FEEDBACK_ENDPOINT as read at start-up; wins over the stored setting. */
  envEndpoint?: string;
  /** Wait after a new queued item before uploading, so a burst of clicks becomes one batch. */
  debounceMs?: number;
  /** How often waiting items are retried while sharing is on. */
  periodMs?: number;
  /** Minimum gap between two `privacy.sync` events (the last status is always sent). */
  statusThrottleMs?: number;
  fetch?: typeof fetch;
  /** Definitions of the tools an answer called (the tool catalog), for its trajectory. */
  toolsFor?: (steps: readonly ToolStep[]) => ToolDefinitionWire[];
}

/** The install token is tied to the endpoint that issued it. */
const TOKEN_KEY = "feedback.token";
const REJECTED_SHOWN = 50;

export class FeedbackSharing {
  readonly outbox: SqliteOutbox;
  readonly privacy: PrivacySettingsService;
  readonly feedback: FeedbackService;
  private readonly settings: SettingsStore;
  private readonly messages: ConversationRepository;
  private sync: FeedbackSync | null = null;
  private syncEndpoint: string | null = null;
  private running: Promise<unknown> | null = null;
  private lastSyncAt: number | null = null;
  private settledWaiters: (() => void)[] = [];
  private debounce: NodeJS.Timeout | null = null;
  private periodic: NodeJS.Timeout | null = null;
  private throttle: NodeJS.Timeout | null = null;
  private statusDirty = false;
  private closed = false;

  constructor(private readonly deps: FeedbackSharingDeps) {
    const { db } = deps;
    this.outbox = new SqliteOutbox(db);
    this.privacy = new PrivacySettingsService({ db, outbox: this.outbox });
    this.messages = deps.messages ?? new MessageStore(db);
    const context = new MessageContext(db, undefined, this.messages);
    this.feedback = new FeedbackService({
      db,
      messages: this.messages,
      outbox: this.outbox,
      versionsFor: (id) => context.versionsFor(id),
      conversationUpTo: (id) => context.conversationUpTo(id),
      stepsFor: (id) => context.stepsFor(id),
      toolsFor: deps.toolsFor,
      getConsent: () => this.privacy.consent(),
    });
    this.settings = new SettingsStore(db);
  }

  /** True once close() was called: hooks that fire late record nothing. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Upload what waits from a previous run (with consent), and retry periodically while on. */
  start(): void {
    const period = this.deps.periodMs ?? 5 * 60_000;
    this.periodic = setInterval(() => {
      if (!this.running && this.outbox.count() > 0) void this.kick();
    }, period);
    this.periodic.unref();
    if (this.outbox.count() > 0) void this.kick();
  }

  /**
   * Record a signal (FeedbackService does the consent check and the redaction, in one
   * transaction); when an item was queued, schedule an upload and tell the UI.
   */
  record(signal: (feedback: FeedbackService) => FeedbackRecord): FeedbackRecord {
    const record = signal(this.feedback);
    if (record.queued) {
      this.schedule();
      this.emitStatus();
    }
    return record;
  }

  /** The answer a regeneration replaced (its `replaced_by` points at `newMessageId`), or null. */
  replacedBy(conversationId: string, newMessageId: string): string | null {
    return this.messages.replacedMessage(conversationId, newMessageId);
  }

  /** The privacy screen's state, with the effective endpoint. */
  state(): PrivacyState {
    const settings = this.privacy.get();
    return {
      sharing: settings.sharing,
      installId: settings.installId,
      consentedAt: settings.consentedAt,
      endpoint: this.endpoint().url,
      sync: this.status(),
    };
  }

  /** Upload state for the API: the sync's own state, the live queue, and the refusals. */
  status(): SyncStatus {
    const sharing = this.privacy.consent();
    const endpoint = this.endpoint();
    const current: EngineSyncStatus | null = this.sync?.getStatus() ?? null;
    let state: SyncStatus["state"] = current?.state ?? "idle";
    let lastError = current?.lastError ?? null;
    if (sharing === "off") state = "disabled";
    else if (!endpoint.explicit) {
      state = "offline";
      lastError = endpoint.problem;
    } else if (state === "disabled") state = "idle";
    return {
      state,
      lastSyncAt: this.lastSyncAt,
      queued: this.outbox.count(),
      lastError,
      nextAttemptAt: state === "disabled" ? null : (current?.nextAttemptAt ?? null),
      rejected: this.outbox.rejected(REJECTED_SHOWN).map((r) => ({
        key: r.key,
        kind: r.item.kind,
        reason: r.reason,
        rejectedAt: r.rejectedAt,
      })),
    };
  }

  /**
   * Change the sharing level and/or the endpoint ("" = back to none). Turning sharing off
   * purges the queue in the same transaction as the setting and then aborts any request in
   * flight before answering; turning it on starts an upload run.
   */
  async update(change: {
    sharing?: SharingLevel;
    endpoint?: string;
  }): Promise<{ privacy: PrivacyState; purged: number }> {
    const before = this.endpoint();
    const endpoint = change.endpoint === undefined ? undefined : change.endpoint.trim() || null;
    // Synchronous: once it returns, every later request check of the sync sees the new consent.
    const result = this.privacy.update({ sharing: change.sharing, endpoint });
    const after = this.endpoint();
    if (result.settings.sharing === "off") {
      this.cancelDebounce();
      await this.sync?.stop();
    }
    if (after.url !== before.url || after.explicit !== before.explicit) {
      // The sync talks to one endpoint (and holds its token): a new endpoint gets a new one.
      const old = this.sync;
      this.sync = null;
      this.syncEndpoint = null;
      await old?.stop();
    }
    if (result.settings.sharing !== "off") void this.kick();
    this.emitStatus();
    return { privacy: this.state(), purged: result.purged };
  }

  /** Exactly the next batch that would be sent, and the size of its JSON. */
  preview(): { items: Record<string, unknown>[]; bytes: number } {
    const items = this.privacy.preview();
    return { items, bytes: Buffer.byteLength(JSON.stringify(items)) };
  }

  /**
   * Upload now; resolves when this pass has ended (queue empty, or the first failure — the
   * run then keeps retrying with backoff in the background), not when a long backoff ends.
   */
  async syncNow(): Promise<SyncStatus> {
    if (this.closed) throw new ApiError("aborted", "Macaron is shutting down.");
    const settled = new Promise<void>((resolve) => this.settledWaiters.push(resolve));
    const run = this.kick();
    if (run) await Promise.race([settled, run]);
    else this.releaseWaiters();
    return this.status();
  }

  /**
   * Ask the feedback service to delete everything this install uploaded. Works with sharing
   * off (that is when people ask), but needs the endpoint the data went to.
   */
  async deleteUploaded(): Promise<number> {
    const sync = this.syncClient();
    if (!sync) {
      throw new ApiError(
        "invalid_input",
        `There is no feedback endpoint to ask: ${this.endpoint().problem ?? "none is set"}`,
      );
    }
    try {
      return await sync.deleteUploadedData();
    } catch (err) {
      throw new ApiError(
        "internal",
        `The feedback service at ${this.endpoint().url} could not be reached or refused: ${(err as Error).message}. Nothing was deleted; try again later.`,
      );
    }
  }

  /** Stop uploading (the request in flight is aborted) and every timer. */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelDebounce();
    if (this.periodic) clearInterval(this.periodic);
    if (this.throttle) clearTimeout(this.throttle);
    this.periodic = this.throttle = null;
    await this.sync?.close();
    this.releaseWaiters();
  }

  private endpoint(): ResolvedEndpoint {
    return resolveFeedbackEndpoint(this.deps.envEndpoint, this.privacy.get().endpoint);
  }

  /** The sync client for the effective endpoint; null without an explicit one. */
  private syncClient(): FeedbackSync | null {
    const endpoint = this.endpoint();
    if (!endpoint.explicit) return null;
    if (this.sync && this.syncEndpoint === endpoint.url) return this.sync;
    const url = endpoint.url;
    this.syncEndpoint = url;
    this.sync = new FeedbackSync({
      outbox: this.outbox,
      endpoint: url,
      getInstall: () => ({ installId: this.privacy.get().installId }),
      getToken: () => {
        const stored = this.settings.get(TOKEN_KEY) as { endpoint?: unknown; token?: unknown } | undefined;
        return stored?.endpoint === url && typeof stored.token === "string" ? stored.token : null;
      },
      setToken: (token) => this.settings.set(TOKEN_KEY, { endpoint: url, token }),
      renewInstall: () => ({ installId: this.privacy.renewInstallId().installId }),
      isEnabled: () => !this.closed && this.privacy.consent() !== "off",
      fetch: this.deps.fetch,
      onStatus: (s) => this.onSyncStatus(s),
    });
    return this.sync;
  }

  /** Start an upload run unless sharing is off or there is nowhere to send; never throws. */
  private kick(): Promise<unknown> | null {
    if (this.closed || this.privacy.consent() === "off") return null;
    const sync = this.syncClient();
    if (!sync) return null;
    const run = sync.syncNow().catch((err: unknown) => this.deps.log("feedback upload failed", err));
    if (!this.running) {
      this.running = run;
      void run.finally(() => {
        if (this.running === run) this.running = null;
        this.releaseWaiters();
      });
    }
    return run;
  }

  /** Upload soon after a new item; a run in progress picks the item up by itself. */
  private schedule(): void {
    if (this.closed) return;
    this.cancelDebounce();
    this.debounce = setTimeout(() => {
      this.debounce = null;
      if (!this.running) void this.kick();
    }, this.deps.debounceMs ?? 2000);
    this.debounce.unref();
  }

  private cancelDebounce(): void {
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = null;
  }

  private onSyncStatus(s: EngineSyncStatus): void {
    if (s.lastSyncAt !== null) this.lastSyncAt = s.lastSyncAt;
    this.emitStatus();
    // A pass ends with any state but "syncing": an empty queue, a failure, a stop.
    if (s.state !== "syncing") this.releaseWaiters();
  }

  private releaseWaiters(): void {
    for (const resolve of this.settledWaiters.splice(0)) resolve();
  }

  /** `privacy.sync`, at most once per throttle interval, the latest state always last. */
  private emitStatus(): void {
    if (this.closed) return;
    const gap = this.deps.statusThrottleMs ?? 250;
    if (gap <= 0) return this.send();
    if (this.throttle) {
      this.statusDirty = true;
      return;
    }
    this.send();
    this.throttle = setTimeout(() => {
      this.throttle = null;
      if (this.statusDirty) this.emitStatus();
    }, gap);
    this.throttle.unref();
  }

  private send(): void {
    this.statusDirty = false;
    try {
      this.deps.events.emit("privacy.sync", this.status());
    } catch (err) {
      // The database is closing (shutdown): no status to report.
      this.deps.log("could not report the feedback sync status", err);
    }
  }
}
