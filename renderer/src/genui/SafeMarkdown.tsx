/**
 * Markdown inside generated components, with the same policy as chat answers: raw HTML stays
 * text (no rehype-raw), images are never fetched, links are http(s)/mailto only and show
 * their real URL. Standalone (no app controller) so a document renders wherever it is given.
 */
import { memo } from "react";
import type { ComponentProps } from "react";
import ReactMarkdown from "react-markdown";
import type { Components, ExtraProps } from "react-markdown";
import { CodeBlock } from "../chat/CodeBlock";
import { textOf } from "../chat/hast-text";
import { SafeLink } from "./SafeLink";

function BlockedImage({ src, alt }: ComponentProps<"img"> & ExtraProps) {
  return (
    <span className="md-image" title="Images from answers are not loaded">
      <span className="md-image__label">Image not loaded:</span> {alt ? `“${alt}” ` : ""}
      {typeof src === "string" && src ? <code>{src}</code> : null}
    </span>
  );
}

function Pre({ node }: ComponentProps<"pre"> & ExtraProps) {
  const code = node?.children.find((child) => child.type === "element" && child.tagName === "code");
  const className = code && code.type === "element" ? code.properties.className : undefined;
  const classes = Array.isArray(className) ? className.map(String) : [];
  const language = classes.find((c) => c.startsWith("language-"))?.slice("language-".length) ?? null;
  return <CodeBlock code={textOf(code ?? node)} language={language} />;
}

const components: Components = {
  a: ({ href, children }) => <SafeLink href={href ?? ""}>{children}</SafeLink>,
  img: BlockedImage,
  pre: Pre,
};

export const SafeMarkdown = memo(function SafeMarkdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown components={components} skipHtml={false}>
        {text}
      </ReactMarkdown>
    </div>
  );
});
