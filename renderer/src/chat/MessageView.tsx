import { memo } from "react";
import type { Message } from "../../../electron/api";
import { useAppState } from "../app/controller-context";
import { AnswerAgain } from "../adapters/AnswerAgain";
import { RoutingChip } from "../adapters/RoutingChip";
import { AnswerFeedback } from "./AnswerFeedback";
import { GenuiAnswer } from "../genui/GenuiAnswer";
import { InteractionSummary } from "../genui/InteractionSummary";
import { InterruptedNote } from "./InterruptedNote";
import { AnswerNotes } from "./AnswerNotes";
import { Markdown } from "./Markdown";
import { MemorySavedNote } from "./MemorySavedNote";
import { GenerationSettings, MessageStats } from "./MessageStats";
import { ToolSteps } from "./ToolStepCard";
import { UserQuestion } from "./UserQuestion";
import { VersionSwitcher } from "./VersionSwitcher";

const ROLE_LABEL: Record<Message["role"], string> = { user: "You", assistant: "Macaron", system: "System" };

/**
 * One message as an article named by its author; assistant text is markdown. `last` marks
 * the conversation's last answer, which can be answered again.
 */
export const MessageView = memo(function MessageView({
  message,
  last = false,
}: {
  message: Message;
  last?: boolean;
}) {
  const streaming = message.status === "streaming";
  // While a tool call waits for the user, the answer is not being typed.
  const waiting = message.steps.some((s) => s.state === "pending");
  const label = ROLE_LABEL[message.role];
  return (
    <article
      className={`message message--${message.role}`}
      aria-label={label}
      aria-busy={streaming || undefined}
    >
      <div className="message__author" aria-hidden="true">
        {label}
      </div>
      <div className="message__body">
        {message.role === "assistant" && (
          <ToolSteps conversationId={message.conversationId} steps={message.steps} />
        )}
        {message.role === "assistant" ? (
          message.format === "ui" ? (
            <GenuiAnswer message={message} />
          ) : (
            <Markdown text={message.content} />
          )
        ) : message.interaction ? (
          <InteractionSummary interaction={message.interaction} />
        ) : (
          <UserQuestion message={message} />
        )}
        {streaming && !waiting && (
          <span className="typing" aria-label="Macaron is typing" role="img">
            <span />
            <span />
            <span />
          </span>
        )}
      </div>
      {message.role === "assistant" && <MessageFooter message={message} last={last} />}
    </article>
  );
});

function MessageFooter({ message, last }: { message: Message; last: boolean }) {
  const waitMs = useAppState((s) => s.answerWaitMs[message.id] ?? null);
  const finished = message.status === "complete" || message.status === "stopped";
  return (
    <div className="message__footer">
      <AnswerNotes message={message} />
      <MemorySavedNote message={message} />
      {message.routing && <RoutingChip routing={message.routing} messageId={message.id} />}
      {message.status === "stopped" && <span className="badge">Stopped</span>}
      <InterruptedNote message={message} />
      {message.status === "error" && (
        <div className="badge badge--error" role="alert">
          {message.error ?? "The answer could not be generated."}
        </div>
      )}
      {message.stats && message.status !== "streaming" && (
        <MessageStats stats={message.stats} routingMs={message.routing?.latencyMs ?? null} waitMs={waitMs} />
      )}
      {message.generation && message.status !== "streaming" && (
        <GenerationSettings generation={message.generation} />
      )}
      <VersionSwitcher message={message} />
      {last && message.status !== "streaming" && <AnswerAgain message={message} />}
      {finished && <AnswerFeedback message={message} />}
    </div>
  );
}
