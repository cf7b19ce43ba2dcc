/**
 * The one markdown policy for model output (chat answers and text inside generated components):
 * raw HTML stays text (no rehype-raw), images are never fetched (a model-written URL could leak
 * data to any server), links are http(s)/mailto only, show their real URL and open only after
 * the user confirms (Electron: openExternal; browser: a new tab without opener).
 * GitHub-flavoured markdown (tables, task lists as disabled checkboxes, strikethrough, autolinks
 * through the same link policy) and math ($…$, $$…$$) typeset by KaTeX, whose CSS and fonts are
 * bundled (no remote fonts: the CSP's font-src stays 'self'). KaTeX runs untrusted (no \href,
 * \url, \includegraphics or \html… commands) and within expansion and size limits, and its output
 * is built from the formula's own characters, so HTML inside math stays text.
 */
import { useState, type ComponentProps, type ReactNode } from "react";
import ReactMarkdown from "react-markdown";
import type { Components, ExtraProps, Options as MarkdownOptions } from "react-markdown";
import rehypeKatex, { type Options as KatexOptions } from "rehype-katex";
import remarkGfm from "remark-gfm";
import remarkMath from "remark-math";
import "katex/dist/katex.min.css";
import "./markdown.css";
import type { ApiClient } from "../../../electron/api";
import { CodeBlock } from "./CodeBlock";
import { textOf } from "./hast-text";
import { markdownVerdict, PLAIN_PREVIEW_CHARS } from "./markdown-limits";

type Platform = ApiClient["platform"];

const SAFE_LINK = /^(https?:\/\/|mailto:)/i;

/**
 * KaTeX untrusted and bounded: macro expansion (KaTeX's own default is 1,000) and sizes a model
 * could blow up; a formula that fails shows as its source in the error colour, never throws.
 */
const KATEX: KatexOptions = { trust: false, strict: "ignore", maxExpand: 300, maxSize: 20 };
const REMARK_PLUGINS: MarkdownOptions["remarkPlugins"] = [remarkGfm, remarkMath];
const REHYPE_PLUGINS: MarkdownOptions["rehypePlugins"] = [[rehypeKatex, KATEX]];

export function SafeLink({
  href,
  children,
  platform,
}: {
  href: string;
  children: ReactNode;
  platform: Platform;
}) {
  if (!SAFE_LINK.test(href)) return <span className="md-link md-link--inert">{children}</span>;
  const label = textOf(children).trim();
  const showUrl = label !== href && label !== href.replace(/^mailto:/i, "");
  const open = platform.openExternal;
  return (
    <>
      <a
        className="md-link"
        href={href}
        title={href}
        {...(open
          ? {
              onClick: (event) => {
                // Electron: never navigate the app window; ask, then hand the URL to the OS.
                event.preventDefault();
                if (window.confirm(`Open this link in your browser?\n\n${href}`)) void open(href);
              },
            }
          : { target: "_blank", rel: "noopener noreferrer" })}
      >
        {children}
      </a>
      {showUrl && <span className="md-link__url"> ({href})</span>}
    </>
  );
}

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

/**
 * An answer past the limits, as text: the first PLAIN_PREVIEW_CHARS characters (laying out a
 * run of hundreds of thousands of characters is itself a long task), the rest on request.
 */
function PlainAnswer({ text, reason }: { text: string; reason: string }) {
  const [whole, setWhole] = useState(false);
  const cut = !whole && text.length > PLAIN_PREVIEW_CHARS;
  return (
    <div className="markdown markdown--plain">
      <p className="markdown__limit" role="note">
        Shown as plain text: {reason}.
      </p>
      <p className="message__plain">{cut ? `${text.slice(0, PLAIN_PREVIEW_CHARS)}…` : text}</p>
      {cut && (
        <button type="button" className="button" onClick={() => setWhole(true)}>
          Show all {text.length.toLocaleString("en")} characters
        </button>
      )}
    </div>
  );
}

/**
 * Markdown text rendered under the policy above; text past the parser's limits (see
 * markdown-limits) is shown as plain text with the reason, never handed to the parser.
 */
export function SafeMarkdownView({
  text,
  platform,
  plainReason,
}: {
  text: string;
  platform: Platform;
  /** Show as plain text for this reason (the caller knows the text is slow to format). */
  plainReason?: string;
}) {
  if (plainReason) return <PlainAnswer text={text} reason={plainReason} />;
  const verdict = markdownVerdict(text);
  if (!verdict.markdown) return <PlainAnswer text={text} reason={verdict.reason} />;
  const components: Components = {
    a: ({ href, children }) => (
      <SafeLink href={href ?? ""} platform={platform}>
        {children}
      </SafeLink>
    ),
    img: BlockedImage,
    pre: Pre,
  };
  return (
    <div className="markdown">
      <ReactMarkdown
        components={components}
        skipHtml={false}
        remarkPlugins={REMARK_PLUGINS}
        rehypePlugins={REHYPE_PLUGINS}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
}
