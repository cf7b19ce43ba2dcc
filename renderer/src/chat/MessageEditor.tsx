import { useEffect, useId, useRef, useState } from "react";

/**
 * Inline editor of a question: Enter or Ctrl+Enter sends it as a new version (Shift+Enter is
 * a new line, as in the composer), Esc cancels. The caller returns focus on cancel.
 */
export function MessageEditor({
  initial,
  busy,
  onSend,
  onCancel,
}: {
  initial: string;
  busy: boolean;
  onSend: (text: string) => void;
  onCancel: () => void;
}) {
  const [text, setText] = useState(initial);
  const id = useId();
  const area = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    const el = area.current;
    if (!el) return;
    el.focus();
    el.setSelectionRange(el.value.length, el.value.length);
  }, []);
  const canSend = !busy && text.trim().length > 0;
  return (
    <form
      className="message-editor"
      onSubmit={(e) => {
        e.preventDefault();
        if (canSend) onSend(text);
      }}
    >
      <label htmlFor={id} className="visually-hidden">
        Edit message
      </label>
      <textarea
        ref={area}
        id={id}
        className="input message-editor__text"
        rows={Math.min(12, Math.max(2, text.split("\n").length))}
        value={text}
        maxLength={100_000}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            onCancel();
          } else if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            if (canSend) onSend(text);
          }
        }}
      />
      <div className="message-editor__actions">
        <button type="submit" className="button button--small button--primary" disabled={!canSend}>
          Update
        </button>
        <button type="button" className="button button--small" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
