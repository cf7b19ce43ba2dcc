/** Events pushed from core to the UI. Deltas, not state: stores apply them per conversation. */
import { z } from "zod";
import { Conversation, EngineStatus, Id, LocalServerStatus, Message, SyncStatus } from "./schemas";
import { GateProgress, Release, UpdateProgress } from "./releases";
import { Download, EngineBuild } from "./hub";
import { McpServerStatus, ToolStep } from "./tools";

export const events = {
  /** A piece of an assistant message as it streams. */
  "chat.delta": z.object({ conversationId: Id, messageId: Id, delta: z.string() }),
  /** The assistant message reached its final state (complete, stopped or error). */
  "chat.done": z.object({ conversationId: Id, message: Message }),
  /** A tool call of a streaming answer was made, decided, run or finished (the whole step). */
  "chat.toolStep": z.object({ conversationId: Id, messageId: Id, step: ToolStep }),
  /** An MCP server was added, changed state or tools, or was removed (`server` null). */
  "mcp.changed": z.object({ name: z.string(), server: McpServerStatus.nullable() }),
  "engine.status": EngineStatus,
  /** A conversation was created, renamed, touched by a new message, or deleted (`deleted`). */
  "conversations.changed": z.object({ conversation: Conversation.nullable(), deletedId: Id.nullable() }),
  /** Adapters were installed, removed, enabled/disabled or rescaled. */
  "adapters.changed": z.object({}),
  /** Memories were added, proposed, edited, accepted or deleted. */
  "memories.changed": z.object({}),
  /** Evaluation gate progress and result of an adapter version. */
  "adapters.gate": GateProgress,
  /** Registry update progress: checks, downloads, verification, failures. */
  "adapters.updates": UpdateProgress,
  /** A new release: the live adapter set, the base model or the harness changed. */
  "releases.changed": z.object({ release: Release }),
  /** Feedback sync progress: queued count, state, refusals. */
  "privacy.sync": SyncStatus,
  /** A hub download's progress or state changed (throttled to a few per second). */
  "hub.download": Download,
  /** The llama.cpp build for this machine: progress, result, fallback. */
  "engine.build": EngineBuild,
  /** The local API server started, stopped, moved, got a new key, or failed to start. */
  "localServer.changed": LocalServerStatus,
} as const;

export type Events = typeof events;
export type EventName = keyof Events;
export type EventPayload<E extends EventName> = z.output<Events[E]>;
export const eventNames = Object.keys(events) as EventName[];

export function isEventName(name: unknown): name is EventName {
  return typeof name === "string" && Object.prototype.hasOwnProperty.call(events, name);
}
