import { ApiError, type EventPayload, type Message } from "../../api";
import type { MessageStore } from "../conversations/message-store";
import type { Log } from "../dispatch";
import type { EventBus } from "../events/event-bus";
import type { DomainHandlers, Handler } from "../handlers";
import type { FeedbackSharing } from "./feedback-sharing";

function answer(messages: MessageStore, id: string): Message {
  const message = messages.get(id);
  if (!message) throw new ApiError("not_found", "This message does not exist (it may have been deleted).");
  return message;
}

/** feedback.* and privacy.*: thin over FeedbackSharing, which owns consent and uploads. */
export function feedbackHandlers(
  sharing: FeedbackSharing,
  messages: MessageStore,
): DomainHandlers<"feedback"> & DomainHandlers<"privacy"> {
  return {
    "feedback.rate": ({ messageId, rating, reason }) => {
      sharing.record((f) => f.rate(messageId, rating, reason));
      return answer(messages, messageId);
    },
    "feedback.correct": ({ messageId, text }) => {
      // The transcript keeps the generated text; the correction is a stored signal (corrected: true).
      sharing.record((f) => f.correct(messageId, text));
      return answer(messages, messageId);
    },
    "feedback.copied": ({ messageId }) => {
      sharing.record((f) => f.copied(messageId));
      return { recorded: true };
    },
    "privacy.get": () => sharing.state(),
    "privacy.update": (change) => sharing.update(change),
    "privacy.preview": () => sharing.preview(),
    "privacy.syncNow": () => sharing.syncNow(),
    "privacy.deleteUploaded": async () => ({ deletedItems: await sharing.deleteUploaded() }),
  };
}

type HookedHandlers = {
  "chat.send": Handler<"chat.send">;
  "chat.regenerate": Handler<"chat.regenerate">;
  "conversations.setAdapters": Handler<"conversations.setAdapters">;
};

export interface FeedbackHookDeps {
  sharing: FeedbackSharing;
  messages: MessageStore;
  events: EventBus;
  log: Log;
}

/**
 * Implicit feedback from the chat, added around the handlers so the turn pipeline knows nothing
 * of it: a regenerated answer that completes becomes a preference pair (old rejected, new
 * chosen); "answer again with X" and pinning X after an answer become router overrides of that
 * answer. An answer that called tools becomes a trajectory when it is done (complete or
 * stopped: denied and stopped calls are outcomes too), and the user's next message after it a
 * follow-up saying whether it corrects it. Recording never fails or delays the call it observes (errors are logged), and the
 * pair is written after `chat.done`, off the streaming path. Returns the wrapped handlers and
 * a disposer for the `chat.done` subscription.
 */
export function withFeedbackHooks<H extends HookedHandlers>(
  handlers: H,
  deps: FeedbackHookDeps,
): { handlers: H; dispose: () => void } {
  const { sharing, messages, events, log } = deps;
  /** New answer id → the answer it replaces, until the new one is done. */
  const pending = new Map<string, string>();
  const safely = (what: string, fn: () => void): void => {
    try {
      fn();
    } catch (err) {
      log(`could not record ${what} feedback`, err);
    }
  };
  const override = (old: Message | undefined, toAdapterId: string): void => {
    if (old?.role !== "assistant") return;
    const from = old.routing?.adapters.map((a) => a.id) ?? [];
    if (from.length === 1 && from[0] === toAdapterId) return; // the router had chosen it already
    safely("router override", () => sharing.record((f) => f.routerOverride(old.id, from, toAdapterId)));
  };

  const dispose = events.subscribe((event, payload) => {
    if (event !== "chat.done") return;
    const { message } = payload as EventPayload<"chat.done">;
    // Defensive: an event built by hand (older code paths, tests) may carry no steps at all.
    const steps: unknown = message.steps;
    if (Array.isArray(steps) && steps.length > 0 && message.status !== "error") {
      setImmediate(() => {
        if (!sharing.isClosed) safely("trajectory", () => sharing.record((f) => f.trajectory(message.id)));
      });
    }
    const oldId = pending.get(message.id);
    if (oldId === undefined) return;
    pending.delete(message.id);
    // Only an answer the user got in full is "chosen"; a stopped or failed one says nothing.
    if (message.status !== "complete") return;
    setImmediate(() => {
      if (!sharing.isClosed)
        safely("regeneration", () => sharing.record((f) => f.regenerated(oldId, message.id)));
    });
  });

  const send: Handler<"chat.send"> = async (input, ctx) => {
    // The answer this message follows, read before the send appends to the conversation.
    let previous: Message | undefined;
    safely("follow-up", () => {
      previous = messages.list(input.conversationId).at(-1);
    });
    const result = await handlers["chat.send"](input, ctx);
    const answered = previous;
    if (answered?.role === "assistant" && answered.steps.length > 0)
      safely("follow-up", () => sharing.record((f) => f.followUp(answered.id, input.text)));
    return result;
  };

  const regenerate: Handler<"chat.regenerate"> = async (input, ctx) => {
    const result = await handlers["chat.regenerate"](input, ctx);
    const fresh = result.assistantMessage;
    safely("regeneration", () => {
      const oldId = sharing.replacedBy(input.conversationId, fresh.id);
      if (!oldId) return;
      // Registered before generation starts: the pipeline yields a macrotask before the engine.
      pending.set(fresh.id, oldId);
      const selection = input.adapters;
      if (selection && typeof selection === "object" && "pinned" in selection)
        override(messages.get(oldId) ?? undefined, selection.pinned);
    });
    return result;
  };

  const setAdapters: Handler<"conversations.setAdapters"> = async (input, ctx) => {
    const result = await handlers["conversations.setAdapters"](input, ctx);
    const selection = input.adapters;
    if (typeof selection === "object" && "pinned" in selection) {
      // Pinning after an answer says which adapter that answer should have had.
      safely("router override", () => {
        const last = messages.list(input.id).at(-1);
        if (last?.status === "complete") override(last, selection.pinned);
      });
    }
    return result;
  };

  return {
    handlers: {
      ...handlers,
      "chat.send": send,
      "chat.regenerate": regenerate,
      "conversations.setAdapters": setAdapters,
    },
    dispose: () => {
      dispose();
      pending.clear();
    },
  };
}
