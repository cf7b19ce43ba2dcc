import type { Message } from "../../../electron/api";

/**
 * How an interrupted answer says why: the app closed while it was written (no error saved), or
 * the reason core gave, e.g. a full disk, shown as an alert so that the user sees what to do.
 */
export function InterruptedNote({ message }: { message: Pick<Message, "status" | "error"> }) {
  if (message.status !== "interrupted") return null;
  if (!message.error) {
    return (
      <span className="badge" title="The app closed while this answer was being written">
        Interrupted
      </span>
    );
  }
  return (
    <div className="badge badge--error" role="alert">
      Interrupted: {message.error}
    </div>
  );
}
