/** Assistant text as markdown, under the shared model-output policy (see safe-markdown). */
import { memo, useDeferredValue, useEffect, useLayoutEffect, useRef, useState } from "react";
import { useController } from "../app/controller-context";
import { enqueueParse } from "./parse-queue";
import { SafeMarkdownView } from "./safe-markdown";
import { noteParseTime, slowBefore } from "./slow-markdown";

/**
 * Render markdown text; memoized so only the message that changed re-parses. The first parse
 * waits its turn in the parse queue (one answer per task: opening a long conversation never
 * blocks the page for all of them at once) and is timed: an answer that was slow to format
 * before is plain text (slow-markdown). Later text (streaming) renders deferred, in work React
 * can interrupt for input.
 */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  const [ready, setReady] = useState(false);
  const started = useRef<number | null>(null);
  useEffect(
    () =>
      enqueueParse(() => {
        started.current = performance.now();
        setReady(true);
      }),
    [],
  );
  const deferred = useDeferredValue(text);
  useLayoutEffect(() => {
    if (!ready || started.current === null) return;
    noteParseTime(deferred, performance.now() - started.current);
    started.current = null;
  }, [ready, deferred]);
  const platform = useController().api.platform;
  const slow = ready ? slowBefore(deferred) : null;
  return (
    <div className="markdown-deferred" aria-busy={!ready || deferred !== text || undefined}>
      {ready && (
        <SafeMarkdownView
          text={deferred}
          platform={platform}
          plainReason={slow === null ? undefined : `it took ${slow.toLocaleString("en")} ms to format before`}
        />
      )}
    </div>
  );
});
