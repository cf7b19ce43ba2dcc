import { ApiError, type Message } from "../../api";
import type { AfterTurn } from "../chat/after-turn";
import type { MessageStore } from "../conversations/message-store";
import type { Log } from "../dispatch";
import type { DomainHandlers } from "../handlers";
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

export interface FeedbackObserverDeps {
  sharing: FeedbackSharing;
  messages: MessageStore;
  log: Log;
}

/**
 * Implicit feedback from the chat, as the turn pipeline's after-turn observer: a regenerated
 * answer that completes becomes a preference pair (old rejected, new chosen); "answer again
 * with X" becomes a router override of the replaced answer. An answer that called tools becomes
 * a trajectory when it is done (complete or stopped: denied and stopped calls are outcomes
 * too), and the user's next message after it a follow-up saying whether it corrects it.
 * Recording never fails or delays the turn (errors are logged); the pair and the trajectory are
 * written on the macrotask after `chat.done`, off the streaming path.
 */
export function feedbackAfterTurn(deps: FeedbackObserverDeps): AfterTurn {
  const { sharing, messages, log } = deps;
  const safely = feedbackRecorder(log);
  return {
    committed: (turn) => {
      const { previous } = turn;
      if (turn.kind === "send") {
        // Typed messages only (chat.send): a component's use is not a reply to the answer's calls.
        if (!turn.interaction && previous?.role === "assistant" && previous.steps.length > 0)
          safely("follow-up", () => sharing.record((f) => f.followUp(previous.id, turn.userText)));
        return;
      }
      if (turn.pinned !== null) {
        const pinned = turn.pinned;
        safely("regeneration", () => {
          override(sharing, safely, messages.get(previous?.id ?? "") ?? undefined, pinned);
        });
      }
    },
    answered: ({ kind, message, previous }) => {
      // Defensive: a message built by hand (older code paths, tests) may carry no steps at all.
      const steps: unknown = message.steps;
      if (Array.isArray(steps) && steps.length > 0 && message.status !== "error") {
        setImmediate(() => {
          if (!sharing.isClosed) safely("trajectory", () => sharing.record((f) => f.trajectory(message.id)));
        });
      }
      // Only an answer the user got in full is "chosen"; a stopped or failed one says nothing.
      if (kind !== "regenerate" || !previous || message.status !== "complete") return;
      const oldId = previous.id;
      setImmediate(() => {
        if (!sharing.isClosed)
          safely("regeneration", () => sharing.record((f) => f.regenerated(oldId, message.id)));
      });
    },
  };
}

/**
 * What core does after a conversation is pinned to an adapter (ConversationHandlerDeps.onPinned):
 * pinning X after an answer says which adapter that answer should have had (a router override
 * of it). Conversations are not turns, so this observer is the handler's, not the pipeline's.
 */
export function pinFeedback(deps: FeedbackObserverDeps): (conversationId: string, pinned: string) => void {
  const { sharing, messages, log } = deps;
  const safely = feedbackRecorder(log);
  return (conversationId, pinned) => {
    safely("router override", () => {
      const last = messages.list(conversationId).at(-1);
      if (last?.status === "complete") override(sharing, safely, last, pinned);
    });
  };
}

type Recorder = (what: string, fn: () => void) => void;

function feedbackRecorder(log: Log): Recorder {
  return (what, fn) => {
    try {
      fn();
    } catch (err) {
      log(`could not record ${what} feedback`, err);
    }
  };
}

/** A router override of `old` towards `toAdapterId`, unless the router had chosen it already. */
function override(
  sharing: FeedbackSharing,
  safely: Recorder,
  old: Message | undefined,
  toAdapterId: string,
): void {
  if (old?.role !== "assistant") return;
  const from = old.routing?.adapters.map((a) => a.id) ?? [];
  if (from.length === 1 && from[0] === toAdapterId) return;
  safely("router override", () => sharing.record((f) => f.routerOverride(old.id, from, toAdapterId)));
}
