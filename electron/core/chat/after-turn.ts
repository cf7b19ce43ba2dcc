/**
 * What happens because of a turn, outside the turn itself: memory proposals, preference pairs,
 * router overrides, trajectories and follow-ups. The pipeline calls its observers in the order
 * given, with the turn's facts; core-services.ts wires the behaviours. An observer never fails
 * or delays the turn: its errors are logged.
 */
import type { AdapterSelection, Message } from "../../api";
import type { ChatTurn, GenerateOptions } from "../engine/types";

/** A turn whose messages are committed; its answer is being generated. */
export interface TurnCommitted {
  kind: "send" | "regenerate";
  conversationId: string;
  /** The user message the answer replies to (on a regenerate: the one answered again). */
  userMessageId: string;
  userText: string;
  /** The new answer's id. */
  answerId: string;
  /**
   * send: the conversation's last message before this turn (the answer this message follows),
   * if any; regenerate: the answer this one replaces.
   */
  previous: Message | null;
  /** The adapter choice the turn ran under (the request's, else the conversation's). */
  selection: AdapterSelection;
  /** The adapter the user pinned for this turn explicitly ("answer again with X"); else null. */
  pinned: string | null;
  /** The user message is the use of a component (GenUI), not text the user typed. */
  interaction: boolean;
}

/** The turn's answer has ended and `chat.done` has been emitted. */
export interface TurnAnswered extends TurnCommitted {
  /** The answer as saved (its status says whether it completed). */
  message: Message;
  /** The prompt the engine evaluated and the adapters/KV policy it ran with. */
  prompt: ChatTurn[];
  adapters: GenerateOptions["adapters"];
  kvPolicy: GenerateOptions["kvPolicy"];
}

export interface AfterTurn {
  /** After the turn's messages are committed, before the call that started it returns. */
  committed?(turn: TurnCommitted): void;
  /** After `chat.done` (the conversation is free again). */
  answered?(turn: TurnAnswered): void;
}

/** Call `fn` on each observer in order; one that throws is logged and the others still run. */
export function notifyAll<K extends keyof AfterTurn>(
  observers: readonly AfterTurn[],
  phase: K,
  facts: Parameters<NonNullable<AfterTurn[K]>>[0],
  log: (message: string, err: unknown) => void,
): void {
  for (const observer of observers) {
    const fn = observer[phase] as ((facts: unknown) => void) | undefined;
    if (!fn) continue;
    try {
      fn.call(observer, facts);
    } catch (err) {
      log(`an after-turn observer failed (${phase})`, err);
    }
  }
}
