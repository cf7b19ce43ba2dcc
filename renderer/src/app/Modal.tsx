import { useEffect, useId, useRef } from "react";
import type { ReactNode } from "react";
import { createPortal } from "react-dom";

/**
 * A modal dialog on the native <dialog> element: the browser traps focus, makes the rest
 * inert and closes it on Escape. Mounted = open; `onClose` asks the owner to unmount it.
 * Portalled to <body> so that an owner inside a form (the composer) does not nest forms;
 * React events still bubble to the owner, so a dialog's own form must stop its submit.
 * Closing returns focus to what had it when the dialog opened (the opener), when that is still
 * on the page.
 */
export function Modal({
  title,
  onClose,
  children,
  className,
}: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  className?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const headingId = useId();
  const close = useRef(onClose);
  useEffect(() => {
    close.current = onClose;
  }, [onClose]);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (!dialog.open) dialog.showModal();
    // Escape closes the native dialog by itself; tell the owner so its state follows.
    const onCancel = (e: Event) => {
      e.preventDefault();
      close.current();
    };
    dialog.addEventListener("cancel", onCancel);
    return () => {
      dialog.removeEventListener("cancel", onCancel);
      if (dialog.open) dialog.close();
      // Unmounting removes the dialog before the browser would restore focus itself.
      if (opener?.isConnected && !opener.closest("dialog:not([open])")) opener.focus();
    };
  }, []);

  return createPortal(
    <dialog
      ref={ref}
      className={`modal ${className ?? ""}`}
      aria-labelledby={headingId}
      // Escape closes the dialog; it must not also reach the app's "Esc stops generating".
      onKeyDown={(e) => {
        if (e.key === "Escape") e.stopPropagation();
      }}
    >
      <div className="modal__header">
        <h2 id={headingId}>{title}</h2>
        <button type="button" className="button button--ghost button--small" onClick={() => close.current()}>
          Close
        </button>
      </div>
      <div className="modal__body">{children}</div>
    </dialog>,
    document.body,
  );
}
