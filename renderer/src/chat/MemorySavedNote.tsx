import { useEffect, useState } from "react";
import type { Memory, Message } from "../../../electron/api";
import { useAppState, useController } from "../app/controller-context";
import { memorySavedFrom, rememberQuestionOf } from "./memory-note-logic";

/**
 * "Saved to memory" under the answer to a "remember that …" message, with the fact and a way
 * to the Memory panel: core stores the fact silently while it answers. Shown only when core did
 * store one (not when memory is off or the fact was known), read from memories.list.
 */
export function MemorySavedNote({ message }: { message: Message }) {
  const controller = useController();
  // A primitive: the note re-renders only when the answer's question changes, not per delta.
  const questionId = useAppState((s) => rememberQuestionOf(s.messages[message.conversationId], message.id));
  const [saved, setSaved] = useState<Memory | null>(null);

  useEffect(() => {
    if (!questionId) return;
    let live = true;
    // Core stored it in the send's own transaction, before this answer existed: one read finds it.
    controller.api.call("memories.list", {}).then(
      (memories) => {
        if (live) setSaved(memorySavedFrom(memories, questionId));
      },
      // Only a note: without the list there is nothing to say.
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [controller, questionId]);

  if (!questionId || !saved) return null;
  return (
    <p className="memory-saved-note" role="note" aria-label="Saved to memory">
      <span className="memory-saved-note__label">Saved to memory:</span>{" "}
      <span className="memory-saved-note__text">{saved.text}</span>{" "}
      <button
        type="button"
        className="link-button memory-saved-note__open"
        aria-haspopup="dialog"
        onClick={() => {
          controller.memory.setOpen(true);
          // The panel's "Use memory" switch shows the current setting (as the header button does).
          void controller.settings.load();
        }}
      >
        Open Memory
      </button>
    </p>
  );
}
