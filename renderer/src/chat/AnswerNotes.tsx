import type { Message } from "../../../electron/api";
import { contextNote, memoriesUsedLabel } from "../memory/memory-logic";

/**
 * What shaped an answer beyond the visible chat: the memories put into its prompt
 * (expandable) and, for a long conversation, how much history the model did not see.
 */
export function AnswerNotes({ message }: { message: Message }) {
  const note = contextNote(message.context);
  const used = message.memoriesUsed;
  if (!note && used.length === 0) return null;
  return (
    <div className="answer-notes">
      {used.length > 0 && (
        <details className="answer-notes__memories">
          <summary>{memoriesUsedLabel(used.length)}</summary>
          <ul aria-label="Memories used">
            {used.map((m) => (
              <li key={m.id}>{m.text}</li>
            ))}
          </ul>
        </details>
      )}
      {note && (
        <p className="answer-notes__context" role="note">
          {note}
        </p>
      )}
    </div>
  );
}
