import { useEffect, useId, useRef, useState } from "react";

/** "Edit answer": the user's version of the answer, saved as a correction. */
export function CorrectionEditor({
  initial,
  busy,
  onSave,
  onCancel,
}: {
  initial: string;
  busy: boolean;
  onSave: (text: string) => Promise<void>;
  onCancel: () => void;
}) {
  const [text, setText] = useState(initial);
  const id = useId();
  const area = useRef<HTMLTextAreaElement>(null);
  useEffect(() => area.current?.focus(), []);
  return (
    <form
      className="feedback__editor"
      onSubmit={(e) => {
        e.preventDefault();
        void onSave(text);
      }}
    >
      <label htmlFor={id}>Corrected answer</label>
      <textarea
        ref={area}
        id={id}
        className="input"
        rows={Math.min(12, Math.max(3, text.split("\n").length + 1))}
        value={text}
        maxLength={100_000}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            onCancel();
          }
        }}
      />
      <div className="feedback__editor-actions">
        <button
          type="submit"
          className="button button--small button--primary"
          disabled={busy || !text.trim()}
        >
          Save correction
        </button>
        <button type="button" className="button button--small" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
