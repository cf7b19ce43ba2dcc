/** Pure wording and rules of the Privacy page: sharing levels, sync status, sizes. */
import type { SharingLevel, SyncStatus } from "../../../electron/api";
import { formatBytes as formatSize } from "../../../common/format-bytes";

export const SHARING_LEVELS: readonly SharingLevel[] = ["off", "ratings", "ratings_and_text"];

export const SHARING_LABELS: Record<SharingLevel, string> = {
  off: "Off",
  ratings: "Ratings only",
  ratings_and_text: "Ratings and conversation text",
};

export const SHARING_HINTS: Record<SharingLevel, string> = {
  off: "Nothing leaves this device. Your ratings and corrections stay here.",
  ratings:
    "Ratings, corrections as signals, regenerations, generated-UI interactions and router overrides — no text.",
  ratings_and_text:
    "The same, plus the text of the rated exchange (prompt, answer, your correction), redacted on this device first.",
};

/** True when `to` sends more than `from`: such a change needs the user's explicit confirmation. */
export function sharesMore(from: SharingLevel, to: SharingLevel): boolean {
  return SHARING_LEVELS.indexOf(to) > SHARING_LEVELS.indexOf(from);
}

/** What the page says after sharing was turned off (the queue is emptied by core). */
export function stoppedSharingMessage(purged: number): string {
  return `Stopped sharing — ${purged} queued ${purged === 1 ? "item" : "items"} deleted`;
}

export function queuedLabel(queued: number): string {
  return `${queued} ${queued === 1 ? "item" : "items"} queued`;
}

const SYNC_STATE_LABELS: Record<SyncStatus["state"], string> = {
  idle: "Up to date",
  syncing: "Sending…",
  backoff: "Waiting to retry",
  offline: "Offline — will retry",
  disabled: "Not sharing",
};

/**
 * The sync state in words. With no feedback service set there is nowhere to send to: core
 * reports its placeholder endpoint as unreachable, which is not "Offline — will retry".
 */
export function syncStateLabel(state: SyncStatus["state"], endpoint?: string): string {
  if (
    endpoint !== undefined &&
    configuredEndpoint(endpoint) === "" &&
    state !== "disabled" &&
    state !== "idle"
  )
    return "No feedback service set — items stay queued here";
  return SYNC_STATE_LABELS[state];
}

/** "1.2 KB (1234 bytes)": the exact count for the curious, a readable size for everyone else. */
export function formatBytes(bytes: number): string {
  return formatSize(bytes, { fixed: true, words: true, exact: true });
}

/**
 * The preview as text: the items exactly as they will be sent, indented for reading. Rendered
 * inside <pre>, never as HTML, so redaction placeholders and user text show literally.
 */
export function previewText(items: readonly Record<string, unknown>[]): string {
  return JSON.stringify(items, null, 2);
}

/** A timestamp for the status lines; "never" for null. */
export function formatTime(at: number | null, locale?: string): string {
  if (at === null) return "never";
  return new Date(at).toLocaleString(locale);
}

/**
 * The endpoint as the user set it, for the "Feedback service URL" field: "" when none is set.
 * Without one, core reports a placeholder under the reserved `.invalid` domain (RFC 2606),
 * which it never contacts; that is "none set", not a value to edit.
 */
export function configuredEndpoint(endpoint: string): string {
  try {
    const host = new URL(endpoint).hostname;
    return host === "invalid" || host.endsWith(".invalid") ? "" : endpoint;
  } catch {
    return "";
  }
}
