/** Assistant text as markdown, under the shared model-output policy (see safe-markdown). */
import { memo } from "react";
import { useController } from "../app/controller-context";
import { SafeMarkdownView } from "./safe-markdown";

/** Render markdown text; memoized so only the message that changed re-parses. */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return <SafeMarkdownView text={text} platform={useController().api.platform} />;
});
