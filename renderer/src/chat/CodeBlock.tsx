import { useEffect, useMemo, useState } from "react";
import { CopyIcon } from "../app/icons";
import { copyText } from "./clipboard";
import { highlightCode } from "./highlight";
import "./code-highlight.css";

type CopyState = "idle" | "copied" | "failed";

/** A fenced code block with its language (highlighted when it has a grammar) and a Copy button. */
export function CodeBlock({ code, language }: { code: string; language: string | null }) {
  const [state, setState] = useState<CopyState>("idle");

  useEffect(() => {
    if (state === "idle") return;
    const handle = setTimeout(() => setState("idle"), 2000);
    return () => clearTimeout(handle);
  }, [state]);

  const text = code.endsWith("\n") ? code.slice(0, -1) : code;
  const highlighted = useMemo(() => highlightCode(text, language), [text, language]);
  return (
    <div className="code-block">
      <div className="code-block__bar">
        <span className="code-block__lang">{language ?? "code"}</span>
        <button
          type="button"
          className="button button--small button--ghost"
          onClick={() => void copyText(text).then((ok) => setState(ok ? "copied" : "failed"))}
        >
          <CopyIcon />
          Copy
        </button>
        <span className="code-block__status" role="status">
          {state === "copied" ? "Copied" : state === "failed" ? "Copy failed" : ""}
        </span>
      </div>
      {/* Focusable, so that a keyboard user can scroll a long line (axe: scrollable-region-focusable). */}
      <pre tabIndex={0}>
        <code className={language ? `language-${language}${highlighted === null ? "" : " hljs"}` : undefined}>
          {highlighted ?? text}
        </code>
      </pre>
    </div>
  );
}
