import { useEffect, useId, useRef, useState } from "react";
import type { KeyboardEvent } from "react";
import type { AdapterSelection, Message } from "../../../electron/api";
import { useAdapterState, useAppState, useChatController } from "../app/controller-context";
import { currentAdapters } from "../state/app-store";
import { regenerateSelection, selectableAdapters } from "./adapter-logic";

/**
 * Under the last answer: "Regenerate" (same adapters as that answer) and the
 * "Answer again with…" menu (a specific adapter, or the base model alone).
 */
export function AnswerAgain({ message }: { message: Message }) {
  const chat = useChatController();
  const sending = useAppState((s) => s.sending);
  const selection = useAppState(currentAdapters);
  const adapters = useAdapterState((s) => s.adapters);
  const [open, setOpen] = useState(false);
  const menuId = useId();
  const toggle = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const choices = selectableAdapters(adapters);

  useEffect(() => {
    if (!open) return;
    menu.current?.scrollIntoView({ block: "nearest" });
    menu.current?.querySelector<HTMLElement>("[role='menuitem']")?.focus({ preventScroll: true });
    const onPointer = (e: PointerEvent) => {
      const target = e.target as Node;
      if (!menu.current?.contains(target) && !toggle.current?.contains(target)) setOpen(false);
    };
    document.addEventListener("pointerdown", onPointer);
    return () => document.removeEventListener("pointerdown", onPointer);
  }, [open]);

  const answerWith = (adapters: AdapterSelection | undefined) => {
    setOpen(false);
    void chat.regenerate(adapters);
  };

  const onMenuKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const items = [...(menu.current?.querySelectorAll<HTMLElement>("[role='menuitem']") ?? [])];
    const index = items.indexOf(document.activeElement as HTMLElement);
    if (e.key === "Escape") {
      e.preventDefault();
      setOpen(false);
      toggle.current?.focus();
    } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const step = e.key === "ArrowDown" ? 1 : -1;
      items[(index + step + items.length) % items.length]?.focus();
    } else if (e.key === "Home" || e.key === "End") {
      e.preventDefault();
      items[e.key === "Home" ? 0 : items.length - 1]?.focus();
    }
  };

  return (
    <div className="answer-again">
      <button
        type="button"
        className="button button--small button--ghost"
        disabled={sending}
        onClick={() => answerWith(regenerateSelection(message.routing, selection))}
        title="Answer the last message again with the same adapters"
      >
        Regenerate
      </button>
      <button
        ref={toggle}
        type="button"
        className="button button--small button--ghost"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        disabled={sending}
        onClick={() => setOpen((o) => !o)}
      >
        Answer again with…
      </button>
      {open && (
        <div
          ref={menu}
          id={menuId}
          role="menu"
          aria-label="Answer again with"
          className="menu"
          onKeyDown={onMenuKey}
        >
          {choices.map((a) => (
            <button
              key={a.id}
              type="button"
              role="menuitem"
              className="menu__item"
              tabIndex={-1}
              title={a.description}
              onClick={() => answerWith({ pinned: a.id })}
            >
              {a.name}
            </button>
          ))}
          <button
            type="button"
            role="menuitem"
            className="menu__item"
            tabIndex={-1}
            onClick={() => answerWith("base")}
          >
            Base model
          </button>
          <button
            type="button"
            role="menuitem"
            className="menu__item"
            tabIndex={-1}
            onClick={() => answerWith("auto")}
          >
            Auto (router)
          </button>
        </div>
      )}
    </div>
  );
}
