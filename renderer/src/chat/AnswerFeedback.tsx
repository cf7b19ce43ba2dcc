import { useEffect, useId, useRef, useState } from "react";
import type { Message } from "../../../electron/api";
import { useFeedbackController, useFeedbackState } from "../app/controller-context";
import { CopyIcon, PencilIcon, ThumbDownIcon, ThumbUpIcon } from "../app/icons";
import { copyText } from "./clipboard";
import { CorrectionEditor } from "./CorrectionEditor";
import { Markdown } from "./Markdown";

/**
 * Feedback under an answer: "Good response" / "Bad response" (pressed = the current rating;
 * "Bad" asks for an optional reason), "Copy" and "Edit answer" (a correction). Every one of
 * them is a training signal, sent only if the user opted in on the Privacy page.
 */
export function AnswerFeedback({ message }: { message: Message }) {
  const feedback = useFeedbackController();
  const busy = useFeedbackState((s) => s.busy.includes(message.id));
  const error = useFeedbackState((s) => s.errors[message.id] ?? null);
  const correction = useFeedbackState((s) => s.corrections[message.id] ?? message.correction ?? null);
  const [askReason, setAskReason] = useState(false);
  const [editing, setEditing] = useState(false);
  const [copyState, setCopyState] = useState<"idle" | "copied" | "failed">("idle");

  useEffect(() => {
    if (copyState === "idle") return;
    const handle = setTimeout(() => setCopyState("idle"), 2000);
    return () => clearTimeout(handle);
  }, [copyState]);

  const rate = (rating: "good" | "bad") => {
    if (rating === "bad") {
      // Shown at once, sent once with the reason (or without it) when the form closes.
      if (!askReason) feedback.beginBad(message.id);
      setAskReason(true);
      return;
    }
    if (askReason) {
      setAskReason(false);
      feedback.dropBad(message.id);
    }
    if (feedback.ratingOf(message.id) !== rating) void feedback.rate(message.id, rating);
  };

  // The answer leaves the screen with its reason form open: the thumbs-down is sent as it is.
  // (finishBad does nothing when no thumbs-down is held.)
  const messageId = message.id;
  useEffect(() => () => void feedback.finishBad(messageId, null), [feedback, messageId]);

  const copy = async () => {
    const ok = await copyText(message.content);
    setCopyState(ok ? "copied" : "failed");
    if (ok) void feedback.copied(message.id);
  };

  return (
    <div className="feedback">
      <div className="feedback__bar" role="group" aria-label="Feedback on this answer">
        <button
          type="button"
          className="icon-button feedback__rate"
          aria-label="Good response"
          title="Good response"
          aria-pressed={message.rating === "good"}
          disabled={busy}
          onClick={() => rate("good")}
        >
          <ThumbUpIcon />
        </button>
        <button
          type="button"
          className="icon-button feedback__rate"
          aria-label="Bad response"
          title="Bad response"
          aria-pressed={message.rating === "bad"}
          disabled={busy}
          onClick={() => rate("bad")}
        >
          <ThumbDownIcon />
        </button>
        <button
          type="button"
          className="icon-button"
          aria-label="Copy answer"
          title="Copy answer"
          onClick={() => void copy()}
        >
          <CopyIcon />
        </button>
        <button
          type="button"
          className="icon-button"
          aria-label="Edit answer"
          title="Edit answer"
          aria-expanded={editing}
          disabled={busy}
          onClick={() => setEditing((e) => !e)}
        >
          <PencilIcon />
        </button>
        <span className="feedback__status" role="status">
          {copyState === "copied" ? "Copied" : copyState === "failed" ? "Copy failed" : ""}
        </span>
        {message.corrected && <span className="badge badge--ok">Corrected</span>}
      </div>
      {askReason && (
        <ReasonForm
          onDone={(reason) => {
            setAskReason(false);
            void feedback.finishBad(message.id, reason);
          }}
        />
      )}
      {editing && (
        <CorrectionEditor
          initial={correction ?? message.content}
          busy={busy}
          onCancel={() => setEditing(false)}
          onSave={async (text) => {
            if (await feedback.correct(message.id, text)) setEditing(false);
          }}
        />
      )}
      {correction !== null && !editing && (
        <section className="feedback__correction" aria-label="Your correction">
          <h3 className="feedback__correction-label">Your correction</h3>
          <Markdown text={correction} />
        </section>
      )}
      {error && (
        <div className="form-error" role="alert">
          {error}
        </div>
      )}
    </div>
  );
}

/** The optional "What was wrong?" after a thumbs-down. Empty + Submit just closes it. */
function ReasonForm({ onDone }: { onDone: (reason: string | null) => void }) {
  const [reason, setReason] = useState("");
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  return (
    <form
      className="feedback__reason"
      onSubmit={(e) => {
        e.preventDefault();
        onDone(reason.trim() || null);
      }}
    >
      <label htmlFor={id}>What was wrong?</label>
      <input
        ref={input}
        id={id}
        className="input"
        value={reason}
        maxLength={2000}
        placeholder="Optional"
        onChange={(e) => setReason(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            onDone(null);
          }
        }}
      />
      <button type="submit" className="button button--small">
        Submit
      </button>
    </form>
  );
}
