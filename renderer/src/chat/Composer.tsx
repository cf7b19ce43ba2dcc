import { useState, type DragEvent } from "react";
import { AdapterPicker } from "../adapters/AdapterPicker";
import { useAppState, useChatController } from "../app/controller-context";
import { COMPOSER_INPUT_ID } from "../app/dom-ids";
import { SendIcon, StopIcon } from "../app/icons";
import { canChat } from "../state/app-store";
import { admit, composeMessage, readAttachment, type Attachment } from "./attachments";
import { AttachButton, AttachmentChips, useTokenCounts } from "./AttachmentChips";
import { isStreaming } from "./chat-logic";

/**
 * Message box: Enter sends, Shift+Enter adds a line; Stop replaces Send while the answer streams.
 * Text and code files join the message by the "Attach file" button or by dropping them on it
 * (see attachments.ts); they are sent as fenced blocks after the typed text.
 */
export function Composer() {
  const chat = useChatController();
  const [text, setText] = useState("");
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const [refused, setRefused] = useState<{ name: string; reason: string }[]>([]);
  const [dropping, setDropping] = useState(false);
  const { byId: counts, total } = useTokenCounts(attachments, text);
  const ready = useAppState(canChat);
  const sending = useAppState((s) => s.sending);
  const error = useAppState((s) => s.composerError);
  const streaming = useAppState((s) => (s.currentId ? isStreaming(s.messages[s.currentId]) : false));
  const hasModel = useAppState((s) => !!s.engine?.model);
  // While a model loads the box is disabled (it keeps its text): Enter cannot silently do nothing.
  const loadingModel = useAppState((s) => s.modelBusy || s.engine?.state === "loading");

  const empty = text.trim().length === 0 && attachments.length === 0;
  const canSend = ready && !sending && !streaming && !empty;

  const send = async () => {
    // Without a model, Enter still goes to the controller, which says why nothing was sent.
    if (sending || streaming || loadingModel || empty) return;
    const sent = text;
    const files = attachments;
    // The question shows in the transcript at once, so the box empties at once too; a failed
    // send puts text and files back (unless something new was typed meanwhile).
    const clearNow = ready;
    if (clearNow) {
      setText("");
      setAttachments([]);
    }
    if (await chat.send(composeMessage(sent, files))) {
      setText((current) => (current === sent ? "" : current));
      setAttachments((current) => (current === files ? [] : current));
      setRefused([]);
    } else if (clearNow) {
      setText((current) => (current === "" ? sent : current));
      setAttachments((current) => (current.length === 0 ? files : current));
    }
  };

  const addFiles = async (files: File[]) => {
    const read = await Promise.all(files.map(readAttachment));
    const unreadable = read.flatMap((r) => (r.ok ? [] : [{ name: r.name, reason: r.reason }]));
    const readable = read.flatMap((r) => (r.ok ? [r.attachment] : []));
    setAttachments((current) => {
      const { added, refused: over } = admit(current, readable, text);
      setRefused([...unreadable, ...over]);
      return [...current, ...added];
    });
  };

  const hasFiles = (e: DragEvent) => e.dataTransfer.types.includes("Files");

  return (
    <form
      className={dropping ? "composer composer--dropping" : "composer"}
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
      onDragOver={(e) => {
        if (!hasFiles(e) || loadingModel) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = "copy";
        setDropping(true);
      }}
      onDragLeave={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDropping(false);
      }}
      onDrop={(e) => {
        if (!hasFiles(e)) return;
        e.preventDefault();
        setDropping(false);
        if (!loadingModel) void addFiles([...e.dataTransfer.files]);
      }}
    >
      {error && (
        <div className="composer__error" role="alert">
          <span>{error}</span>
          <button
            type="button"
            className="button button--small button--ghost"
            onClick={() => chat.dismissError()}
          >
            Dismiss
          </button>
        </div>
      )}
      <div className="composer__tools">
        <AdapterPicker />
        <AttachButton onFiles={(files) => void addFiles(files)} disabled={loadingModel} />
      </div>
      <AttachmentChips
        attachments={attachments}
        counts={counts}
        total={total}
        refused={refused}
        onRemove={(id) => setAttachments((current) => current.filter((a) => a.id !== id))}
        onDismissRefused={() => setRefused([])}
      />
      <div className="composer__row">
        <textarea
          id={COMPOSER_INPUT_ID}
          className="composer__input"
          aria-label="Message"
          aria-keyshortcuts="Control+L Meta+L /"
          placeholder={
            loadingModel
              ? "Loading the model…"
              : hasModel
                ? "Message Macaron…"
                : "Load a model to start chatting"
          }
          disabled={loadingModel}
          title="Enter sends, Shift+Enter adds a line"
          rows={1}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              void send();
            }
          }}
        />
        {/* Stop takes Send's place while the answer streams: Send reappearing means it ended. */}
        {streaming ? (
          <button
            type="button"
            className="button button--danger"
            onClick={() => void chat.stop()}
            aria-keyshortcuts="Escape"
            title="Stop (Esc)"
          >
            <StopIcon />
            Stop
          </button>
        ) : (
          <button type="submit" className="button button--primary" disabled={!canSend}>
            <SendIcon />
            Send
          </button>
        )}
      </div>
    </form>
  );
}
