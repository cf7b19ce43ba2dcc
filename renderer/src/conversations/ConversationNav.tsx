import { useEffect, useMemo, useRef, useState } from "react";
import type { KeyboardEvent } from "react";
import { useAppState, useConversationController } from "../app/controller-context";
import { COMPOSER_INPUT_ID, SEARCH_INPUT_ID } from "../app/dom-ids";
import { PlusIcon } from "../app/icons";
import { SHORTCUTS } from "../app/use-shortcuts";
import { visibleConversations, visibleHits } from "../state/app-store";
import { ConversationItem } from "./ConversationItem";
import { SearchResults } from "./SearchResults";
import { TransferActions } from "./TransferActions";

const SEARCH_DEBOUNCE_MS = 200;

/**
 * Moves focus within the conversation list: Up/Down (Home/End) between conversations, Left/Right
 * between a conversation's link and its actions. Each conversation is one Tab stop (its link);
 * the actions are reached with the arrows, so a long list does not cost four Tabs a row.
 */
function onListKeyDown(e: KeyboardEvent<HTMLUListElement>) {
  const target = e.target as HTMLElement;
  const row = target.closest("li");
  if (!row || target.tagName === "INPUT") return;
  const links = [...e.currentTarget.querySelectorAll<HTMLElement>(".conversation__link")];
  const inRow = [...row.querySelectorAll<HTMLElement>(".conversation__link, .conversation__actions button")];
  const at = links.indexOf(row.querySelector<HTMLElement>(".conversation__link")!);
  let next: HTMLElement | undefined;
  if (e.key === "ArrowDown") next = links[at + 1];
  else if (e.key === "ArrowUp") next = links[at - 1];
  else if (e.key === "Home") next = links[0];
  else if (e.key === "End") next = links.at(-1);
  else if (e.key === "ArrowRight") next = inRow[inRow.indexOf(target) + 1];
  else if (e.key === "ArrowLeft") next = inRow[inRow.indexOf(target) - 1];
  else return;
  e.preventDefault();
  next?.focus();
}

/** Sidebar: new chat, search, the conversation list with rename and delete. */
export function ConversationNav({
  open,
  onClose,
}: {
  open: boolean;
  /** Closes the drawer (narrow widths); `returnFocus` puts focus back on its toggle. */
  onClose: (returnFocus: boolean) => void;
}) {
  const controller = useConversationController();
  const conversations = useAppState((s) => s.conversations);
  const searchHits = useAppState((s) => s.searchHits);
  const pendingDeletes = useAppState((s) => s.pendingDeletes);
  const currentId = useAppState((s) => s.currentId);
  const phase = useAppState((s) => s.phase);
  const [query, setQuery] = useState("");
  const nav = useRef<HTMLElement>(null);

  // The drawer takes focus when it opens, so the keyboard lands where the eyes do; Escape
  // closes it from anywhere (focus may be on <body> after a deleted row went away). Inner
  // Escapes (clearing the search, cancelling a rename) prevent the default and win; a dialog's
  // stops at the dialog. On `document`: after React's root handlers, before the window listener
  // of the app's shortcuts, so an open drawer's Escape closes the drawer and does not also stop
  // the answer being generated.
  useEffect(() => {
    if (!open) return;
    nav.current?.querySelector<HTMLElement>("button, input")?.focus();
    const onKeyDown = (e: globalThis.KeyboardEvent) => {
      if (e.key !== "Escape" || e.defaultPrevented) return;
      e.preventDefault();
      onClose(true);
    };
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, [open, onClose]);

  // Derived here, not in a selector: a selector returning a new array re-renders forever.
  const visible = useMemo(
    () => visibleConversations({ conversations, pendingDeletes }),
    [conversations, pendingDeletes],
  );
  const hits = useMemo(() => visibleHits({ searchHits, pendingDeletes }), [searchHits, pendingDeletes]);
  // The plain list while the query is empty (or its first answer has not come yet).
  const searching = query.trim() !== "" && hits !== null;

  useEffect(() => {
    const handle = setTimeout(() => void controller.search(query), query ? SEARCH_DEBOUNCE_MS : 0);
    return () => clearTimeout(handle);
  }, [controller, query]);

  const newChat = () => {
    controller.newChat();
    onClose(false);
    document.getElementById(COMPOSER_INPUT_ID)?.focus();
  };

  return (
    <nav
      ref={nav}
      id="conversation-nav"
      className={open ? "sidebar sidebar--open" : "sidebar"}
      aria-label="Conversations"
      // Picking a chat (list or search result) closes the drawer, also when it is the open one
      // (no hashchange then).
      onClick={(e) => {
        if ((e.target as HTMLElement).closest("a[href^='#']")) onClose(false);
      }}
    >
      <div className="sidebar__top">
        <span className="brand" aria-hidden="true">
          <span className="brand__mark" />
          Macaron
        </span>
        <button
          type="button"
          className="button button--primary"
          onClick={newChat}
          aria-keyshortcuts="Control+Shift+O Meta+Shift+O Control+N Meta+N"
          title="New chat (Ctrl+Shift+O)"
        >
          <PlusIcon />
          New chat
        </button>
      </div>
      <input
        id={SEARCH_INPUT_ID}
        className="input sidebar__search"
        type="search"
        aria-label="Search conversations"
        placeholder="Search…"
        aria-keyshortcuts="Control+K Meta+K"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Escape" && query) {
            e.preventDefault();
            setQuery("");
          }
        }}
      />
      {searching ? (
        <>
          {hits.length === 0 && <p className="sidebar__empty">No conversations match.</p>}
          <SearchResults hits={hits} currentId={currentId} />
        </>
      ) : (
        <>
          {phase === "loaded" && visible.length === 0 && (
            <p className="sidebar__empty">No conversations yet.</p>
          )}
          <ul
            className="conversation-list"
            aria-describedby="conversation-list-keys"
            onKeyDown={onListKeyDown}
          >
            {visible.map((c) => (
              <ConversationItem key={c.id} conversation={c} current={c.id === currentId} />
            ))}
          </ul>
        </>
      )}
      <p id="conversation-list-keys" className="visually-hidden">
        Up and down arrows move between conversations; left and right reach rename, export and delete.
      </p>
      <TransferActions />
      <details className="shortcuts">
        <summary>Keyboard shortcuts</summary>
        <dl>
          {SHORTCUTS.map((s) => (
            <div key={s.action}>
              <dt>
                <kbd>{s.keys}</kbd>
              </dt>
              <dd>{s.action}</dd>
            </div>
          ))}
        </dl>
        <p className="shortcuts__note">On macOS use Cmd instead of Ctrl.</p>
      </details>
    </nav>
  );
}
