/**
 * Chatting in the open conversation: send (creating the conversation on the first message),
 * regenerate, stop, and the streamed answer (chat.delta batched per frame, then chat.done).
 * Shares the app store; AppController routes the chat events here. dispose() drops deltas
 * still buffered.
 */
import { messageDefaults } from "../../../electron/api";
import type { AdapterSelection, EventPayload, Message, ToolDecision } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import { canChat } from "../state/app-store";
import type { AppState, AppStore } from "../state/app-store";
import {
  applyDeltas,
  applyDone,
  isStreaming,
  mergeSent,
  replaceLastAnswer,
  titleFromText,
} from "./chat-logic";
import type { Delta } from "./chat-logic";
import { findMessage, withCreatedConversation } from "../conversations/conversation-logic";
import { FrameBatcher } from "./frame-batcher";
import type { Schedule } from "./frame-batcher";
import { applyToolStep } from "./tool-logic";
import { withEdit, withTranscript } from "./versions-logic";

export class ChatController {
  private readonly batcher: FrameBatcher;

  constructor(
    private readonly api: RendererApi,
    private readonly store: AppStore,
    schedule?: Schedule,
    /** A monotonic clock in ms (tests pass their own). */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.batcher = new FrameBatcher((batch) => {
      this.set((s) => ({ messages: applyDeltas(s.messages, batch) }));
      this.noteFirstText(batch);
    }, schedule);
  }

  /** The send whose answer has not shown text yet: its conversation and when Enter was pressed. */
  private waiting: { conversationId: string | null; sentAt: number } | null = null;
  private pendingSeq = 0;

  /** Records Enter → first text on screen for the answer of the send in progress. */
  private noteFirstText(batch: readonly Delta[]): void {
    const waiting = this.waiting;
    if (!waiting) return;
    const first = batch.find((d) => d.conversationId === waiting.conversationId && d.delta.length > 0);
    if (!first) return;
    this.waiting = null;
    const waited = Math.max(0, this.now() - waiting.sentAt);
    this.set((s) => ({ answerWaitMs: { ...s.answerWaitMs, [first.messageId]: waited } }));
  }

  dispose(): void {
    this.batcher.dispose();
  }

  /**
   * Send `text` in the current conversation, creating it first when it is new.
   * Resolves true when the message was accepted; on failure the error is in `composerError`.
   */
  async send(text: string): Promise<boolean> {
    const trimmed = text.trim();
    const state = this.store.getState();
    if (!trimmed || state.sending) return false;
    if (!canChat(state)) {
      this.set({ composerError: "No model is loaded yet. Open a model or try the demo model first." });
      return false;
    }
    const sentAt = this.now();
    this.waiting = { conversationId: state.currentId, sentAt };
    // Shown at once; core's copy takes its place when chat.send answers.
    const pending: Message = {
      ...messageDefaults(),
      id: `pending-question-${++this.pendingSeq}`,
      conversationId: state.currentId ?? "",
      role: "user",
      content: trimmed,
      status: "complete",
      error: null,
      createdAt: Date.now(),
      stats: null,
    };
    this.set({
      sending: true,
      composerError: null,
      pendingQuestion: { conversationId: state.currentId, message: pending },
    });
    try {
      let id = state.currentId;
      if (!id) {
        let conversation = await this.api.call("conversations.create", { title: titleFromText(trimmed) });
        const draft = this.store.getState().draftAdapters;
        // The choice made before the chat existed becomes the conversation's own.
        if (draft !== "auto") {
          conversation = await this.api.call("conversations.setAdapters", {
            id: conversation.id,
            adapters: draft,
          });
        }
        const created = conversation.id;
        id = created;
        if (this.waiting?.sentAt === sentAt) this.waiting = { conversationId: created, sentAt };
        this.set((s) => ({
          ...withCreatedConversation(s, conversation),
          pendingQuestion: { conversationId: created, message: { ...pending, conversationId: created } },
        }));
      }
      const sent = await this.api.call("chat.send", { conversationId: id, text: trimmed });
      this.set((s) => ({
        messages: mergeSent(s.messages, [sent.userMessage, sent.assistantMessage]),
        pendingQuestion: null,
      }));
      return true;
    } catch (error) {
      if (this.waiting?.sentAt === sentAt) this.waiting = null;
      this.set({ composerError: errorMessage(error), pendingQuestion: null });
      return false;
    } finally {
      this.set({ sending: false });
    }
  }

  /**
   * Answer the last question again, with `adapters` or (undefined) the conversation's own
   * choice, and `format` ("text": a UI answer that failed to show, answered as text) or the
   * previous answer's. The new answer takes the old one's place in the transcript.
   */
  async regenerate(adapters?: AdapterSelection, format?: "text" | "ui"): Promise<boolean> {
    const state = this.store.getState();
    const id = state.currentId;
    if (!id || state.sending || isStreaming(state.messages[id])) return false;
    this.set({ sending: true, composerError: null });
    try {
      const { assistantMessage } = await this.api.call("chat.regenerate", {
        conversationId: id,
        ...(adapters === undefined ? {} : { adapters }),
        ...(format === undefined ? {} : { format }),
      });
      this.set((s) => ({ messages: replaceLastAnswer(s.messages, assistantMessage) }));
      return true;
    } catch (error) {
      this.set({ composerError: errorMessage(error) });
      return false;
    } finally {
      this.set({ sending: false });
    }
  }

  /**
   * Edit and resend a question (chat.edit): the new version and its answer take the place of
   * the edited message and what followed it, which stay as an earlier version.
   */
  async edit(conversationId: string, messageId: string, text: string): Promise<boolean> {
    const trimmed = text.trim();
    return this.versionCall(conversationId, trimmed.length > 0, async () => {
      const sent = await this.api.call("chat.edit", { conversationId, messageId, text: trimmed });
      this.set((s) => ({
        messages: withEdit(s.messages, messageId, sent.userMessage, sent.assistantMessage),
      }));
    });
  }

  /** Show another version of a message (chat.showVersion): its branch becomes the transcript. */
  async showVersion(conversationId: string, messageId: string): Promise<boolean> {
    return this.versionCall(conversationId, true, async () => {
      const { messages } = await this.api.call("chat.showVersion", { messageId });
      this.set((s) => ({ messages: withTranscript(s.messages, conversationId, messages) }));
    });
  }

  /** One call at a time, never while an answer streams; a failure shows under the composer. */
  private async versionCall(
    conversationId: string,
    ok: boolean,
    call: () => Promise<void>,
  ): Promise<boolean> {
    const state = this.store.getState();
    if (!ok || state.sending || isStreaming(state.messages[conversationId])) return false;
    this.set({ sending: true, composerError: null });
    try {
      await call();
      return true;
    } catch (error) {
      this.set({ composerError: errorMessage(error) });
      return false;
    } finally {
      this.set({ sending: false });
    }
  }

  /** Stop the generation in the current conversation; the partial answer stays as "stopped". */
  async stop(): Promise<void> {
    const { currentId, messages } = this.store.getState();
    if (!currentId || !isStreaming(messages[currentId])) return;
    try {
      await this.api.call("chat.stop", { conversationId: currentId });
    } catch (error) {
      this.set({ composerError: errorMessage(error) });
    }
  }

  dismissError(): void {
    this.set({ composerError: null });
  }

  /** chat.delta: buffered, applied at most once per frame. */
  onDelta(delta: Delta): void {
    this.batcher.push(delta);
  }

  /** chat.done: the buffered deltas first, then the final message replaces the streamed one. */
  onDone(message: Message): void {
    this.batcher.flush();
    this.put(message);
  }

  /**
   * chat.toolStep: the whole step goes into its answer at once. The deltas buffered before it
   * go first, so the text and the calls keep the order in which they happened.
   */
  onToolStep({ conversationId, messageId, step }: EventPayload<"chat.toolStep">): void {
    this.batcher.flush();
    this.set((s) => ({ messages: applyToolStep(s.messages, conversationId, messageId, step) }));
  }

  /**
   * The user's answer to a tool call waiting for permission. Resolves null when core took it
   * (the step's new state is shown at once), or the reason it did not (e.g. the answer was
   * stopped meanwhile).
   */
  async decideTool(
    conversationId: string,
    messageId: string,
    stepId: string,
    decision: ToolDecision,
  ): Promise<string | null> {
    try {
      const step = await this.api.call("chat.decideTool", { conversationId, stepId, decision });
      this.set((s) => ({ messages: applyToolStep(s.messages, conversationId, messageId, step) }));
      return null;
    } catch (error) {
      return errorMessage(error);
    }
  }

  /** A message by id, in whichever conversation holds it. */
  get(messageId: string): Message | undefined {
    return findMessage(this.store.getState().messages, messageId);
  }

  /** Replace a message (a new rating, say) in its conversation. */
  put(message: Message): void {
    this.set((s) => ({ messages: applyDone(s.messages, message) }));
  }

  private set(patch: Partial<AppState> | ((state: AppState) => Partial<AppState>)): void {
    this.store.setState(patch);
  }
}
