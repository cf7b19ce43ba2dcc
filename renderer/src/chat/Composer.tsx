import { useState } from "react";
import { AdapterPicker } from "../adapters/AdapterPicker";
import { useAppState, useChatController } from "../app/controller-context";
import { COMPOSER_INPUT_ID } from "../app/dom-ids";
import { canChat } from "../state/app-store";
import { isStreaming } from "./chat-logic";

/** Message box: Enter sends, Shift+Enter adds a line; Stop replaces Send while the answer streams. */
export function Composer() {
  const chat = useChatController();
  const [text, setText] = useState("");
  const ready = useAppState(canChat);
  const sending = useAppState((s) => s.sending);
  const error = useAppState((s) => s.composerError);
  const streaming = useAppState((s) => (s.currentId ? isStreaming(s.messages[s.currentId]) : false));
  const hasModel = useAppState((s) => !!s.engine?.model);
  // While a model loads the box is disabled (it keeps its text): Enter cannot silently do nothing.
  const loadingModel = useAppState((s) => s.modelBusy || s.engine?.state === "loading");

  const canSend = ready && !sending && !streaming && text.trim().length > 0;

  const send = async () => {
    // Without a model, Enter still goes to the controller, which says why nothing was sent.
    if (sending || streaming || loadingModel || !text.trim()) return;
    const sent = text;
    // The text is cleared only once the core accepted it: a failed send keeps what was typed.
    if (await chat.send(sent)) setText((current) => (current === sent ? "" : current));
  };

  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
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
      </div>
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
            Stop
          </button>
        ) : (
          <button type="submit" className="button button--primary" disabled={!canSend}>
            Send
          </button>
        )}
      </div>
    </form>
  );
}
