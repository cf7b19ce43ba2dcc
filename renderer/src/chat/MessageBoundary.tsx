/**
 * An error boundary around every message: an answer that throws while rendering (a renderer
 * bug, a stored message of an unexpected shape) shows a notice with "Show as plain text" in its
 * place, and the rest of the conversation and the composer keep working. Without it one bad
 * message blanks the whole window, and a reload opens the same conversation again. A UI answer
 * that threw also offers "Answer as text".
 */
import { Component, type ReactNode } from "react";
import type { Message } from "../../../electron/api";
import { AnswerAsText } from "./AnswerAsText";

interface Props {
  message: Message;
  children: ReactNode;
}

interface State {
  failed: boolean;
  plain: boolean;
}

/** The message's text however it is stored (a malformed one may not hold a string). */
function plainText(content: unknown): string {
  if (typeof content === "string") return content;
  try {
    return JSON.stringify(content) ?? String(content);
  } catch {
    return String(content);
  }
}

export class MessageBoundary extends Component<Props, State> {
  override state: State = { failed: false, plain: false };

  static getDerivedStateFromError(): Partial<State> {
    return { failed: true };
  }

  override componentDidCatch(error: unknown): void {
    console.error("A message could not be rendered:", error);
  }

  override componentDidUpdate(prev: Props): void {
    // New text (a streaming answer, an edit) gets a fresh try.
    if (this.state.failed && prev.message.content !== this.props.message.content) {
      this.setState({ failed: false, plain: false });
    }
  }

  override render(): ReactNode {
    if (!this.state.failed) return this.props.children;
    const { message } = this.props;
    return (
      <article
        className={`message message--${String(message.role)} message--failed`}
        aria-label="Message not shown"
      >
        <div className="message__body">
          <p role="alert" className="badge badge--error">
            This message could not be shown.
          </p>
          {this.state.plain ? (
            <p className="message__plain">{plainText(message.content)}</p>
          ) : (
            <button type="button" className="button" onClick={() => this.setState({ plain: true })}>
              Show as plain text
            </button>
          )}
          {/* A UI answer that threw as a whole: the same question can be answered as text. */}
          {message.role === "assistant" && message.format === "ui" && <AnswerAsText message={message} />}
        </div>
      </article>
    );
  }
}
