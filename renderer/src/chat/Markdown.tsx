/** Assistant text as markdown, under the shared model-output policy (see safe-markdown). */
import { memo, useDeferredValue, useEffect, useState } from "react";
import { useController } from "../app/controller-context";
import { enqueueParse } from "./parse-queue";
import { SafeMarkdownView } from "./safe-markdown";

/**
 * Render markdown text; memoized so only the message that changed re-parses. The first parse
 * waits its turn in the parse queue (one answer per task: opening a long conversation never
 * blocks the page for all of them at once); later text (streaming) renders deferred, in work
 * React can interrupt for input.
 */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  const [ready, setReady] = useState(false);
  useEffect(() => enqueueParse(() => setReady(true)), []);
  const deferred = useDeferredValue(text);
  const platform = useController().api.platform;
  return (
    <div className="markdown-deferred" aria-busy={!ready || deferred !== text || undefined}>
      {ready && <SafeMarkdownView text={deferred} platform={platform} />}
    </div>
  );
});
