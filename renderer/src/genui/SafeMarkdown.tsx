/**
 * Markdown inside generated components, with the same policy as chat answers (see
 * chat/safe-markdown). Standalone (no app controller) so a document renders wherever it is given.
 */
import { memo } from "react";
import { SafeMarkdownView } from "../chat/safe-markdown";
import { useGenui } from "./genui-context";

export const SafeMarkdown = memo(function SafeMarkdown({ text }: { text: string }) {
  return <SafeMarkdownView text={text} platform={useGenui().platform} />;
});
