/**
 * Uploads the feedback outbox to the cloud endpoint, only while the user's consent holds.
 * Items leave the outbox only on the server's word (accepted/duplicate/rejected); anything
 * uncertain (timeout, reset, lost answer, stop) keeps them queued and the server's dedupe by
 * idempotency key makes the resend harmless. Everything is async: the chat never waits on it.
 */
import { randomBytes } from "node:crypto";
import { LIMITS } from "../../../../common/feedback-protocol";
import type { Outbox, OutboxEntry } from "../outbox-types";
import { nextBatch } from "../sqlite-outbox";
import { abortableSleep, backoffDelay } from "./backoff";
import { encodeBatch, FeedbackEndpoint, type Outcome } from "./transport";

export type SyncState = "idle" | "syncing" | "backoff" | "offline" | "disabled";

export interface SyncStatus {
  state: SyncState;
  /** When the outbox was last seen empty after a successful pass. */
  lastSyncAt: number | null;
  queued: number;
  /** Items the server refused for good since this sync started (they stay in the outbox's view). */
  rejectedCount: number;
  lastError: string | null;
  nextAttemptAt: number | null;
}

export interface FeedbackSyncDeps {
  outbox: Outbox;
  /** Base URL of the service, e.g. https://feedback.example.com */
  endpoint: string;
  getInstall(): { installId: string };
  /** The install token, kept by the app in its settings. */
  getToken(): string | null | Promise<string | null>;
  setToken(token: string | null): void | Promise<void>;
  /**
   * Gives this install a new id (and returns it). Called when the service answers that the
   * current id is registered but the app holds no valid token for it (lost settings, a token
   * kept for another endpoint): the service rotates a token only for its holder, so uploads
   * go on under a new id. Without it, such a sync fails with the service's reason.
   */
  renewInstall?(): { installId: string } | Promise<{ installId: string }>;
  /** The user's upload consent, read before every request. */
  isEnabled(): boolean;
  fetch?: typeof fetch;
  now?: () => number;
  /** Resolves after ms, or early when the signal aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  random?: () => number;
  onStatus?: (status: SyncStatus) => void;
  requestTimeoutMs?: number;
  backoffBaseMs?: number;
  backoffCapMs?: number;
}

type Failure = { error: string; delayMs: number; offline: boolean };

/** Stop was called: unwinds the loop without touching the outbox. */
class Stopped extends Error {}

export class FeedbackSync {
  private readonly endpoint: FeedbackEndpoint;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly baseMs: number;
  private readonly capMs: number;
  private run: Promise<SyncStatus> | null = null;
  private abort: AbortController | null = null;
  private wake: AbortController | null = null;
  private failures = 0;
  private status: SyncStatus;

  constructor(private readonly deps: FeedbackSyncDeps) {
    this.now = deps.now ?? Date.now;
    this.sleep = deps.sleep ?? abortableSleep;
    this.random = deps.random ?? Math.random;
    this.baseMs = deps.backoffBaseMs ?? 1000;
    this.capMs = deps.backoffCapMs ?? 5 * 60_000;
    this.endpoint = new FeedbackEndpoint({
      endpoint: deps.endpoint,
      fetch: deps.fetch ?? ((...a) => fetch(...a)),
      now: this.now,
      requestTimeoutMs: deps.requestTimeoutMs ?? 30_000,
    });
    this.status = {
      state: deps.isEnabled() ? "idle" : "disabled",
      lastSyncAt: null,
      queued: 0,
      rejectedCount: 0,
      lastError: null,
      nextAttemptAt: null,
    };
  }

  /** A copy of the current status. */
  getStatus(): SyncStatus {
    return { ...this.status };
  }

  /**
   * Uploads until the outbox is empty, consent is withdrawn or stop() is called, waiting out
   * failures with backoff. While a run is going on, returns it (and cuts a backoff wait short).
   */
  syncNow(): Promise<SyncStatus> {
    if (this.run) {
      this.wake?.abort();
      return this.run;
    }
    const ac = new AbortController();
    this.abort = ac;
    this.run = this.loop(ac.signal).finally(() => {
      this.run = null;
      this.abort = null;
    });
    return this.run;
  }

  /**
   * Aborts the request in flight at once and ends the run: once this resolves, no further
   * request is made until syncNow() is called again. Call it when consent is revoked.
   */
  async stop(): Promise<void> {
    if (!this.run) return;
    this.abort?.abort(new Stopped("sync stopped"));
    await this.run;
  }

  /** Same as stop(). */
  close(): Promise<void> {
    return this.stop();
  }

  /**
   * Deletes everything this install uploaded (works without upload consent: revoking it is
   * when users ask). Returns how many items the server deleted; throws with the reason.
   */
  async deleteUploadedData(): Promise<number> {
    const signal = new AbortController().signal;
    const { installId } = this.deps.getInstall();
    let token = await this.token(signal, true);
    let out = await this.endpoint.deleteData(token, installId, signal);
    if (out.kind === "unauthorized") {
      token = await this.token(signal, true, true);
      out = await this.endpoint.deleteData(token, installId, signal);
    }
    if (out.kind === "ok") return out.value;
    throw new Error(`could not delete uploaded feedback: ${out.reason}`);
  }

  private async loop(signal: AbortSignal): Promise<SyncStatus> {
    try {
      for (;;) {
        this.guard(signal);
        // The same caps as the privacy preview's "what would be sent".
        const entries = nextBatch(this.deps.outbox);
        if (entries.length === 0) {
          this.failures = 0;
          this.publish({ state: "idle", lastSyncAt: this.now(), lastError: null, nextAttemptAt: null });
          break;
        }
        this.publish({ state: "syncing", nextAttemptAt: null });
        let failure: Failure | null;
        try {
          failure = await this.deliver(entries, signal, { reauthorized: false });
        } catch (err) {
          if (!(err instanceof RegisterFailed)) throw err;
          failure = err.failure;
        }
        if (!failure) {
          this.failures = 0;
          continue;
        }
        this.deps.outbox.recordAttempt(
          entries.map((e) => e.key),
          failure.error,
          this.now(),
        );
        const nextAttemptAt = this.now() + failure.delayMs;
        this.publish({
          state: failure.offline ? "offline" : "backoff",
          lastError: failure.error,
          nextAttemptAt,
        });
        this.wake = new AbortController();
        await this.sleep(failure.delayMs, AbortSignal.any([signal, this.wake.signal]));
        this.wake = null;
      }
    } catch (err) {
      if (err instanceof Stopped || err instanceof Disabled)
        this.publish({ state: this.deps.isEnabled() ? "idle" : "disabled", nextAttemptAt: null });
      // Anything else (e.g. the outbox's database failed) ends the run; the next syncNow retries.
      else this.publish({ state: "backoff", lastError: (err as Error).message, nextAttemptAt: null });
    }
    return this.getStatus();
  }

  /** Sends one batch (split in halves while too big); null when the server settled every item. */
  private async deliver(
    entries: OutboxEntry[],
    signal: AbortSignal,
    auth: { reauthorized: boolean },
  ): Promise<Failure | null> {
    const items = entries.map((e) => e.item);
    // The token first: registering may give the install a new id, which the batch must carry.
    let token = await this.token(signal, false);
    let { installId } = this.deps.getInstall();
    let body = await encodeBatch(installId, items);
    if (body.length > LIMITS.maxCompressedBytes && entries.length > 1)
      return this.split(entries, signal, auth);
    this.guard(signal);
    let out = await this.endpoint.postBatch(token, body, signal);
    if (out.kind === "unauthorized" && !auth.reauthorized) {
      // A rotated or lost token: register again, once per pass.
      auth.reauthorized = true;
      token = await this.token(signal, false, true);
      this.guard(signal);
      if (this.deps.getInstall().installId !== installId) {
        installId = this.deps.getInstall().installId;
        body = await encodeBatch(installId, items);
      }
      out = await this.endpoint.postBatch(token, body, signal);
    }
    switch (out.kind) {
      case "ok": {
        const sent = new Set(entries.map((e) => e.key));
        const settled = [...out.value.accepted, ...out.value.duplicates].filter((k) => sent.has(k));
        const rejected = out.value.rejected.filter((r) => sent.has(r.key));
        const now = this.now();
        if (settled.length > 0) this.deps.outbox.markDelivered(settled, now);
        if (rejected.length > 0) this.deps.outbox.markRejected(rejected, now);
        this.publish({ rejectedCount: this.status.rejectedCount + rejected.length });
        const answered = new Set([...settled, ...rejected.map((r) => r.key)]);
        const missing = entries.filter((e) => !answered.has(e.key)).map((e) => e.key);
        if (missing.length === 0) return null;
        return this.failure({
          kind: "retry",
          status: 200,
          retryAfterMs: null,
          reason: "items missing from the answer",
        });
      }
      case "refused":
        if (out.status === 413 && entries.length > 1) return this.split(entries, signal, auth);
        this.deps.outbox.markRejected(
          entries.map((e) => ({ key: e.key, reason: out.reason })),
          this.now(),
        );
        this.publish({ rejectedCount: this.status.rejectedCount + entries.length, lastError: out.reason });
        return null;
      default:
        return this.failure(out);
    }
  }

  private async split(entries: OutboxEntry[], signal: AbortSignal, auth: { reauthorized: boolean }) {
    const half = Math.ceil(entries.length / 2);
    return (
      (await this.deliver(entries.slice(0, half), signal, auth)) ??
      this.deliver(entries.slice(half), signal, auth)
    );
  }

  private failure(out: Exclude<Outcome<unknown>, { kind: "ok" }>): Failure {
    this.failures++;
    const delayMs =
      out.kind === "retry" && out.retryAfterMs !== null
        ? out.retryAfterMs
        : backoffDelay(this.failures, this.random, this.baseMs, this.capMs);
    return { error: out.reason, delayMs, offline: out.kind === "network" && out.offline };
  }

  /** The stored token, or a new one from registering (also when `renew`). Throws on failure. */
  private async token(signal: AbortSignal, forDelete: boolean, renew = false): Promise<string> {
    const stored = renew ? null : await this.deps.getToken();
    if (stored) return stored;
    if (!forDelete) this.guard(signal);
    let out = await this.register(signal);
    if (out.kind === "taken") {
      // The id is registered and this app has no valid token for it. Deleting needs that
      // install's token (the service will not let an id alone delete data); uploading can go
      // on under a new id.
      if (forDelete)
        throw new Error(
          "could not delete uploaded feedback: the feedback service has this install registered, but the app no longer holds its token",
        );
      if (this.deps.renewInstall) {
        await this.deps.renewInstall();
        this.guard(signal);
        out = await this.register(signal);
      }
    }
    if (out.kind !== "ok") {
      if (forDelete) throw new Error(`could not register with the feedback service: ${out.reason}`);
      throw new RegisterFailed(this.failure(out));
    }
    this.proposed = null;
    await this.deps.setToken(out.value.token);
    return out.value.token;
  }

  /**
   * The token this install proposes while registering, kept until an answer arrives: a retry
   * after a lost answer proposes the same one, which the service takes as proof (idempotent).
   */
  private proposed: { installId: string; token: string } | null = null;

  private register(signal: AbortSignal): Promise<Outcome<{ token: string }>> {
    const { installId } = this.deps.getInstall();
    if (this.proposed?.installId !== installId)
      this.proposed = { installId, token: randomBytes(32).toString("base64url") };
    return this.endpoint.register(installId, signal, this.proposed.token);
  }

  /** Throws when the run must not make another request. */
  private guard(signal: AbortSignal): void {
    if (signal.aborted) throw new Stopped("sync stopped");
    if (!this.deps.isEnabled()) throw new Disabled("feedback upload is off");
  }

  private publish(patch: Partial<SyncStatus>): void {
    let queued = this.status.queued;
    try {
      queued = this.deps.outbox.count();
    } catch {
      // The outbox is closing (app shutdown): keep the last count.
    }
    this.status = { ...this.status, ...patch, queued };
    try {
      this.deps.onStatus?.(this.getStatus());
    } catch {
      // A listener's bug must not stop the upload.
    }
  }
}

class Disabled extends Error {}

/** Registering failed transiently: the loop backs off like for a failed batch. */
class RegisterFailed extends Error {
  constructor(readonly failure: Failure) {
    super(failure.error);
  }
}
