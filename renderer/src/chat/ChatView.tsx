import { useMemo } from "react";
import { useAppState } from "../app/controller-context";
import { canChat } from "../state/app-store";
import { withPendingQuestion } from "./chat-logic";
import { Composer } from "./Composer";
import { DemoStart } from "./DemoStart";
import { Transcript } from "./Transcript";

/** The open conversation: transcript and composer. */
export function ChatView() {
  const stored = useAppState((s) => (s.currentId ? s.messages[s.currentId] : undefined));
  const pending = useAppState((s) =>
    s.pendingQuestion && s.pendingQuestion.conversationId === s.currentId ? s.pendingQuestion.message : null,
  );
  const messages = useMemo(() => withPendingQuestion(stored, pending), [stored, pending]);
  const loading = useAppState((s) => (s.currentId ? s.detail[s.currentId] === "loading" : false));
  const ready = useAppState(canChat);
  const hint = loading ? "Loading conversation…" : ready ? "Send a message to start" : null;
  const demo = useAppState((s) => s.engine?.state === "ready" && s.engine.model?.isDemo === true);
  return (
    <section className="chat" aria-label="Chat">
      <Transcript
        messages={messages}
        hint={hint}
        intro={demo && ready && !loading && (messages?.length ?? 0) === 0 ? <DemoStart /> : null}
      />
      <Composer />
    </section>
  );
}
