import { useEffect, useState } from "react";
import { CopyIcon } from "../app/icons";

type CopyState = "idle" | "copied" | "failed";

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Clipboard API needs a secure context; a LAN http:// page falls back to a selection copy.
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.append(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}

/** A fenced code block with its language and a Copy button. */
export function CodeBlock({ code, language }: { code: string; language: string | null }) {
  const [state, setState] = useState<CopyState>("idle");

  useEffect(() => {
    if (state === "idle") return;
    const handle = setTimeout(() => setState("idle"), 2000);
    return () => clearTimeout(handle);
  }, [state]);

  const text = code.endsWith("\n") ? code.slice(0, -1) : code;
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
      <pre>
        <code className={language ? `language-${language}` : undefined}>{text}</code>
      </pre>
    </div>
  );
}
