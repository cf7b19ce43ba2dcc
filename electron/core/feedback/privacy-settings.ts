import type { Database } from "better-sqlite3";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { FeedbackItem } from "../../../common/feedback-protocol";
import { ApiError } from "../../api";
import { SettingsStore } from "../settings/settings-store";
import { type SqliteOutbox, nextBatch } from "./sqlite-outbox";

export const SharingLevel = z.enum(["off", "ratings", "ratings_and_text"]);
export type SharingLevel = z.infer<typeof SharingLevel>;

export const PrivacySettings = z.object({
  /** What may leave the machine: nothing, ratings and signals without text, or text too (redacted). */
  sharing: SharingLevel,
  /** Random, made on first use; identifies this install to the feedback service (never the user). */
  installId: z.string().uuid(),
  /** When the current sharing level was chosen (null while sharing is off). */
  consentedAt: z.number().int().nullable(),
  /** Feedback service URL; null means the app's default. */
  endpoint: z.string().nullable(),
});
export type PrivacySettings = z.infer<typeof PrivacySettings>;

export const PrivacyChange = z
  .object({ sharing: SharingLevel.optional(), endpoint: z.string().max(2000).nullable().optional() })
  .strict();
export type PrivacyChange = z.infer<typeof PrivacyChange>;

export interface PrivacyUpdate {
  settings: PrivacySettings;
  /** Queued items deleted because sharing was turned off. */
  purged: number;
  /** Queued items whose text was removed because sharing was lowered to ratings only. */
  stripped: number;
}

const KEY = "privacy";

/** https anywhere; plain http only to this machine (a local test service). */
export function checkEndpoint(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new ApiError("invalid_input", `The feedback endpoint "${endpoint}" is not a URL.`);
  }
  const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    throw new ApiError(
      "invalid_input",
      "The feedback endpoint must use https (plain http only to localhost).",
    );
  }
  return url.toString().replace(/\/$/, "");
}

/**
 * The user's feedback-sharing choice, in the settings table. Lowering the choice takes effect
 * on what is already queued, in the same transaction: "off" deletes every queued item, "ratings"
 * removes the text from queued items. Events recorded while sharing was off are never queued later.
 */
export class PrivacySettingsService {
  private readonly store: SettingsStore;
  private readonly now: () => number;
  private readonly newId: () => string;

  constructor(
    private readonly deps: { db: Database; outbox: SqliteOutbox; now?: () => number; newId?: () => string },
  ) {
    this.store = new SettingsStore(deps.db);
    this.now = deps.now ?? Date.now;
    this.newId = deps.newId ?? randomUUID;
  }

  /** The current settings; the first call creates the install id (sharing starts "off"). */
  get(): PrivacySettings {
    const parsed = PrivacySettings.safeParse(this.store.get(KEY));
    if (parsed.success) return parsed.data;
    // Absent or damaged: start over with sharing off (the safe default) but keep a valid id.
    const stored = this.store.get(KEY) as { installId?: unknown } | undefined;
    const id = z.string().uuid().safeParse(stored?.installId);
    const fresh: PrivacySettings = {
      sharing: "off",
      installId: id.success ? id.data : this.newId(),
      consentedAt: null,
      endpoint: null,
    };
    this.store.set(KEY, fresh);
    return fresh;
  }

  /**
   * A new install id, sharing and consent kept: the feedback service knows the old id but the
   * app lost its token (only the token's holder may rotate it), so uploads go on under this one.
   */
  renewInstallId(): PrivacySettings {
    const next: PrivacySettings = { ...this.get(), installId: this.newId() };
    this.store.set(KEY, next);
    return next;
  }

  /** The sharing level, for FeedbackService's `getConsent`. */
  consent(): SharingLevel {
    return this.get().sharing;
  }

  /** Change the sharing level and/or the endpoint; see the class comment for what lowering does. */
  update(change: PrivacyChange): PrivacyUpdate {
    const parsed = PrivacyChange.safeParse(change);
    if (!parsed.success)
      throw new ApiError(
        "invalid_input",
        `Invalid privacy settings: ${parsed.error.issues[0]?.message ?? "bad input"}.`,
      );
    const { sharing, endpoint } = parsed.data;
    const checkedEndpoint = endpoint ? checkEndpoint(endpoint) : endpoint;
    return this.deps.db.transaction((): PrivacyUpdate => {
      const current = this.get();
      const next: PrivacySettings = { ...current };
      if (checkedEndpoint !== undefined) next.endpoint = checkedEndpoint;
      let purged = 0;
      let stripped = 0;
      if (sharing !== undefined && sharing !== current.sharing) {
        next.sharing = sharing;
        next.consentedAt = sharing === "off" ? null : this.now();
        if (sharing === "off") purged = this.deps.outbox.purge();
        else if (sharing === "ratings") stripped = this.deps.outbox.removeText();
      }
      this.store.set(KEY, next);
      return { settings: next, purged, stripped };
    })();
  }

  close(): void {
    // Nothing to release: the database belongs to its owner.
  }

  /** Exactly what the next upload would send (same order and caps as the sync), up to maxItems. */
  preview(maxItems?: number): FeedbackItem[] {
    return nextBatch(this.deps.outbox, maxItems).map((e) => e.item);
  }
}
