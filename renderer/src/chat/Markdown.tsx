/** Assistant text as markdown, under the shared model-output policy (see safe-markdown). */
import { memo, useDeferredValue } from "react";
import { useController } from "../app/controller-context";
import { SafeMarkdownView } from "./safe-markdown";

/**
 * Render markdown text; memoized so only the message that changed re-parses. The parse runs
 * deferred (a transition React can interrupt between messages): opening a conversation of many
 * long answers paints the page and answers input while they are parsed one after another, so
 * the longest task is one message's parse, not the whole conversation's.
 */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  const deferred = useDeferredValue(text, "");
  const platform = useController().api.platform;
  return (
    <div className="markdown-deferred" aria-busy={deferred !== text || undefined}>
      <SafeMarkdownView text={deferred} platform={platform} />
    </div>
  );
});
