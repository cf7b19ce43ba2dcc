import { useEffect, useId, useLayoutEffect, useRef } from "react";
import type { ReactNode } from "react";
import { createPortal } from "react-dom";
import { CloseIcon } from "./icons";

/**
 * Where the next dialog returns focus when the control that opened it does not outlive the
 * click (an item of a menu that closes as the dialog opens): the menu's trigger.
 */
let nextOpener: HTMLElement | null = null;
export function returnFocusTo(element: HTMLElement | null): void {
  nextOpener = element;
}

/**
 * A modal dialog on the native <dialog> element: the browser traps focus, makes the rest
 * inert and closes it on Escape. Mounted = open; `onClose` asks the owner to unmount it.
 * Portalled to <body> so that an owner inside a form (the composer) does not nest forms;
 * React events still bubble to the owner, so a dialog's own form must stop its submit.
 * Closing (Escape, Close, or the owner unmounting it) returns focus to what had it when the
 * dialog opened (the opener), when that is still on the page.
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

  // A layout effect: its cleanup runs before React removes the dialog from the page. A passive
  // one ran after, when the browser had already moved focus to <body> and a stacked dialog
  // (Models over Load settings) could not be refocused.
  useLayoutEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const active = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const opener = nextOpener ?? (active && !dialog.contains(active) ? active : null);
    nextOpener = null;
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
      // (StrictMode's trial unmount lands here too; its second mount then finds the opener focused.)
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
          <CloseIcon />
          Close
        </button>
      </div>
      <div className="modal__body">{children}</div>
    </dialog>,
    document.body,
  );
}
