/** Pure rules of the Memory panel and of the notes under answers. */
import type { Memory, Message } from "../../../electron/api";

/** Proposed memories wait for the user; active ones are used in prompts. Newest change first. */
export function splitMemories(memories: readonly Memory[]): { proposed: Memory[]; active: Memory[] } {
  const byRecent = [...memories].sort((a, b) => b.updatedAt - a.updatedAt || b.createdAt - a.createdAt);
  return {
    proposed: byRecent.filter((m) => m.status === "proposed"),
    active: byRecent.filter((m) => m.status === "active"),
  };
}

/** Where a memory came from, in the user's words. */
export function memorySourceLabel(memory: Pick<Memory, "source">): string {
  return memory.source === "user" ? "You said" : "Proposed by Macaron";
}

/** Insert or replace a memory in a list (keeps the list's order otherwise). */
export function upsertMemory(list: readonly Memory[] | null, memory: Memory): Memory[] {
  const current = list ?? [];
  const index = current.findIndex((m) => m.id === memory.id);
  if (index === -1) return [memory, ...current];
  const next = [...current];
  next[index] = memory;
  return next;
}

export function memoriesUsedLabel(count: number): string {
  return `Used ${count} ${count === 1 ? "memory" : "memories"}`;
}

/**
 * The note under an answer whose history did not fit the context window, or null when all of
 * it was used. A long chat must never forget silently.
 */
export function contextNote(context: Message["context"]): string | null {
  if (!context || context.strategy === "full" || context.droppedMessages === 0) return null;
  const n = context.droppedMessages;
  const messages = `${n} earlier ${n === 1 ? "message" : "messages"}`;
  return context.strategy === "summary"
    ? `Long conversation: ${messages} summarized to fit the model's context`
    : `Long conversation: ${messages} left out of the model's context (sliding window)`;
}
