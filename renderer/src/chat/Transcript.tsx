import { useEffect, useLayoutEffect, useRef, type ReactNode } from "react";
import type { Message } from "../../../electron/api";
import { MessageBoundary } from "./MessageBoundary";
import { MessageView } from "./MessageView";

const EMPTY: readonly Message[] = [];
// Within this many pixels of the bottom, new text keeps the view pinned to the end.
const STICKY_PX = 80;

/** The message log; follows the stream unless the user has scrolled up to read. */
export function Transcript({
  messages = EMPTY,
  hint,
  intro = null,
}: {
  messages?: readonly Message[];
  hint: string | null;
  /** Shown above the messages, inside the scrolling region (the demo's empty chat). */
  intro?: ReactNode;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const logRef = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  const visible = messages.filter((m) => m.role !== "system");

  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [messages]);

  // Answers are parsed one per task after they mount (parse-queue): the log keeps growing after
  // the messages changed, so a pinned view follows its size, not only the message list.
  useEffect(() => {
    const el = scroller.current;
    const log = logRef.current;
    if (!el || !log || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => {
      if (pinned.current) el.scrollTop = el.scrollHeight;
    });
    observer.observe(log);
    return () => observer.disconnect();
  }, []);

  return (
    <div
      ref={scroller}
      className="transcript"
      onScroll={(e) => {
        const el = e.currentTarget;
        pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < STICKY_PX;
      }}
    >
      {intro}
      {hint && messages.length === 0 && <p className="transcript__hint">{hint}</p>}
      <div ref={logRef} role="log" aria-live="polite" aria-label="Messages" className="transcript__log">
        {visible.map((m, i) => (
          <MessageBoundary key={m.id} message={m}>
            <MessageView
              message={m}
              last={i === visible.length - 1 && i > 0 && visible[i - 1]!.role === "user"}
            />
          </MessageBoundary>
        ))}
      </div>
    </div>
  );
}
