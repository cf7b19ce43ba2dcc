import { useEffect, useMemo, useState } from "react";
import { useAppState, useConversationController } from "../app/controller-context";
import { COMPOSER_INPUT_ID, SEARCH_INPUT_ID } from "../app/dom-ids";
import { SHORTCUTS } from "../app/use-shortcuts";
import { visibleConversations, visibleHits } from "../state/app-store";
import { ConversationItem } from "./ConversationItem";
import { SearchResults } from "./SearchResults";
import { TransferActions } from "./TransferActions";

const SEARCH_DEBOUNCE_MS = 200;

/** Sidebar: new chat, search, the conversation list with rename and delete. */
export function ConversationNav({ open, onNavigate }: { open: boolean; onNavigate: () => void }) {
  const controller = useConversationController();
  const conversations = useAppState((s) => s.conversations);
  const searchHits = useAppState((s) => s.searchHits);
  const pendingDeletes = useAppState((s) => s.pendingDeletes);
  const currentId = useAppState((s) => s.currentId);
  const phase = useAppState((s) => s.phase);
  const [query, setQuery] = useState("");

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
    onNavigate();
    document.getElementById(COMPOSER_INPUT_ID)?.focus();
  };

  return (
    <nav
      id="conversation-nav"
      className={open ? "sidebar sidebar--open" : "sidebar"}
      aria-label="Conversations"
    >
      <div className="sidebar__top">
        <span className="brand" aria-hidden="true">
          Macaron
        </span>
        <button
          type="button"
          className="button button--primary"
          onClick={newChat}
          aria-keyshortcuts="Control+Shift+O Meta+Shift+O Control+N Meta+N"
          title="New chat (Ctrl+Shift+O)"
        >
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
          <ul className="conversation-list">
            {visible.map((c) => (
              <ConversationItem key={c.id} conversation={c} current={c.id === currentId} />
            ))}
          </ul>
        </>
      )}
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
