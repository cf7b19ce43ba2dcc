/**
 * Feedback on answers: "Good response" / "Bad response" (with an optional reason), "Copy"
 * and "Edit answer" (a correction). Ratings show at once and roll back when core refuses.
 * A correction saved in this session is kept here per message, so it shows at once; saved ones
 * come with the message (`correction`), after a reload too.
 */
import { createStore } from "zustand/vanilla";
import type { StoreApi } from "zustand/vanilla";
import type { Message } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";

export type Rating = "good" | "bad";

export interface FeedbackState {
  /** The user's corrected text per message id, from this session's "Save correction". */
  corrections: Readonly<Record<string, string>>;
  /** Message ids with a feedback call in flight. */
  busy: readonly string[];
  /** The last failure per message id, shown under that answer. */
  errors: Readonly<Record<string, string>>;
}

export type FeedbackStore = StoreApi<FeedbackState>;

/** How the controller reads and replaces messages in the app store. */
export interface MessageAccess {
  get(messageId: string): Message | undefined;
  put(message: Message): void;
}

export class FeedbackController {
  readonly store: FeedbackStore = createStore<FeedbackState>()(() => ({
    corrections: {},
    busy: [],
    errors: {},
  }));

  constructor(
    private readonly api: RendererApi,
    private readonly messages: MessageAccess,
  ) {}

  /**
   * Rate an answer. The button shows the new rating at once; a refusal restores the previous
   * one and says why under the answer.
   */
  async rate(messageId: string, rating: Rating, reason?: string): Promise<boolean> {
    const before = this.messages.get(messageId);
    if (!before) return false;
    this.messages.put({ ...before, rating });
    const trimmed = reason?.trim();
    return this.withBusy(
      messageId,
      async () => {
        const updated = await this.api.call(
          "feedback.rate",
          trimmed ? { messageId, rating, reason: trimmed.slice(0, 2000) } : { messageId, rating },
        );
        this.putKeepingContent(updated);
      },
      () => {
        const now = this.messages.get(messageId);
        if (now) this.messages.put({ ...now, rating: before.rating });
      },
    );
  }

  /** Thumbs-downs shown but not sent yet (their reason form is open): the rating before them. */
  private readonly heldBad = new Map<string, Message["rating"]>();

  /**
   * A thumbs-down shows at once, but is sent when its reason form closes (`finishBad`), with the
   * reason or without: one rating, one upload item (sending it at once and the reason as an
   * update queued two).
   */
  beginBad(messageId: string): void {
    const before = this.messages.get(messageId);
    if (!before || this.heldBad.has(messageId)) return;
    this.heldBad.set(messageId, before.rating);
    this.messages.put({ ...before, rating: "bad" });
  }

  /** Send the held thumbs-down with `reason` (null: none); false when refused or nothing held. */
  async finishBad(messageId: string, reason: string | null): Promise<boolean> {
    if (!this.heldBad.has(messageId)) return false;
    const previous = this.heldBad.get(messageId) ?? null;
    this.heldBad.delete(messageId);
    // Already "bad" before, and no reason to add: nothing new to record.
    if (previous === "bad" && !reason?.trim()) return true;
    const now = this.messages.get(messageId);
    if (!now) return false;
    this.messages.put({ ...now, rating: previous });
    return this.rate(messageId, "bad", reason ?? undefined);
  }

  /** The answer's rating as shown now. */
  ratingOf(messageId: string): Message["rating"] {
    return this.messages.get(messageId)?.rating ?? null;
  }

  /** Take back a held thumbs-down without sending it (the user chose another rating). */
  dropBad(messageId: string): void {
    if (!this.heldBad.has(messageId)) return;
    const previous = this.heldBad.get(messageId) ?? null;
    this.heldBad.delete(messageId);
    const now = this.messages.get(messageId);
    if (now) this.messages.put({ ...now, rating: previous });
  }

  /** Store the user's version of an answer; resolves false (error shown) when refused. */
  async correct(messageId: string, text: string): Promise<boolean> {
    const trimmed = text.trim();
    if (!trimmed) {
      this.setError(messageId, "The correction cannot be empty.");
      return false;
    }
    return this.withBusy(messageId, async () => {
      const updated = await this.api.call("feedback.correct", { messageId, text });
      this.putKeepingContent({ ...updated, corrected: true });
      this.store.setState((s) => ({ corrections: { ...s.corrections, [messageId]: text } }));
    });
  }

  /** The answer was copied: a weak positive signal. Never bothers the user if it fails. */
  async copied(messageId: string): Promise<void> {
    try {
      await this.api.call("feedback.copied", { messageId });
    } catch {
      // Only a signal; the copy itself already worked.
    }
  }

  dismissError(messageId: string): void {
    this.setError(messageId, null);
  }

  /** The answer's text stays as streamed: a feedback call must not rewrite the transcript. */
  private putKeepingContent(updated: Message): void {
    const now = this.messages.get(updated.id);
    this.messages.put(
      now
        ? { ...now, rating: updated.rating, corrected: updated.corrected, correction: updated.correction }
        : updated,
    );
  }

  private async withBusy(
    messageId: string,
    action: () => Promise<void>,
    rollback?: () => void,
  ): Promise<boolean> {
    this.store.setState((s) => ({ busy: [...s.busy, messageId] }));
    this.setError(messageId, null);
    try {
      await action();
      return true;
    } catch (error) {
      rollback?.();
      this.setError(messageId, errorMessage(error));
      return false;
    } finally {
      this.store.setState((s) => {
        const index = s.busy.indexOf(messageId);
        return index === -1 ? {} : { busy: [...s.busy.slice(0, index), ...s.busy.slice(index + 1)] };
      });
    }
  }

  private setError(messageId: string, error: string | null): void {
    this.store.setState((s) => {
      if (error === null) {
        if (!(messageId in s.errors)) return {};
        const errors = { ...s.errors };
        delete errors[messageId];
        return { errors };
      }
      return { errors: { ...s.errors, [messageId]: error } };
    });
  }
}
