import type { ReactNode } from "react";
import { textOf } from "../chat/hast-text";
import { useGenui } from "./genui-context";

const SAFE_LINK = /^(https?:\/\/|mailto:)/i;

/**
 * A link from model output: shown with its real URL, opened only after the user confirms
 * (Electron: openExternal; browser: a new tab without opener). Anything but http(s)/mailto
 * renders as plain text, whatever validation let through.
 */
export function SafeLink({ href, children }: { href: string; children: ReactNode }) {
  const { platform } = useGenui();
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
