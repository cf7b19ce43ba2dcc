import { useEffect } from "react";
import type { AppController } from "../state/app-controller";
import { COMPOSER_INPUT_ID, SEARCH_INPUT_ID } from "./dom-ids";

/** Shortcuts listed in the sidebar; Ctrl+Shift+O is primary because browsers keep Ctrl+N. */
export const SHORTCUTS = [
  { keys: "Ctrl+Shift+O / Ctrl+N", action: "New chat" },
  { keys: "Ctrl+L or /", action: "Focus the message box" },
  { keys: "Ctrl+K", action: "Search conversations" },
  { keys: "Esc", action: "Stop generating" },
] as const;

function focusById(id: string, select = false): void {
  const element = document.getElementById(id);
  if (element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement) {
    element.focus();
    if (select) element.select();
  }
}

function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/** Global keyboard shortcuts (Ctrl on Windows/Linux, Cmd on macOS). */
export function useShortcuts(controller: AppController): void {
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.isComposing) return;
      const mod = event.ctrlKey || event.metaKey;
      const key = event.key.toLowerCase();
      if ((mod && event.shiftKey && key === "o") || (mod && !event.shiftKey && key === "n")) {
        event.preventDefault();
        controller.conversations.newChat();
        requestAnimationFrame(() => focusById(COMPOSER_INPUT_ID));
      } else if (
        (mod && !event.shiftKey && key === "l") ||
        (!mod && !event.altKey && event.key === "/" && !isTyping(event.target))
      ) {
        event.preventDefault();
        focusById(COMPOSER_INPUT_ID);
      } else if (mod && !event.shiftKey && key === "k") {
        event.preventDefault();
        focusById(SEARCH_INPUT_ID, true);
      } else if (event.key === "Escape" && !mod) {
        // Escape inside the rename field cancels the rename (handled there); elsewhere it stops.
        const { currentId, messages } = controller.store.getState();
        if (currentId && messages[currentId]?.some((m) => m.status === "streaming")) {
          event.preventDefault();
          void controller.chat.stop();
        }
      }
    };
    window.addEventListener("keydown", onKeyDown);
    return () => window.removeEventListener("keydown", onKeyDown);
  }, [controller]);
}
