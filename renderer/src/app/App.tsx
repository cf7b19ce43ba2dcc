import { useCallback, useEffect, useState } from "react";
import { AdaptersPanel } from "../adapters/AdaptersPanel";
import { ChatView } from "../chat/ChatView";
import { ConversationNav } from "../conversations/ConversationNav";
import { DatabaseScreen } from "../database/DatabaseScreen";
import { MemoryPanel } from "../memory/MemoryPanel";
import { PrivacyDialog } from "../privacy/PrivacyDialog";
import { Toasts } from "../conversations/Toasts";
import { ModelBar } from "../models/ModelBar";
import { LoadSettingsDialog } from "../models/LoadSettingsDialog";
import { ModelPanel } from "../models/ModelPanel";
import { ModelsDialog } from "../models/ModelsDialog";
import { SettingsDialog } from "../settings/SettingsDialog";
import {
  useAdapterState,
  useAppState,
  useController,
  useHubState,
  useLocalModelsState,
  useMemoryState,
  usePrivacyState,
  useSettingsState,
} from "./controller-context";
import { COMPOSER_INPUT_ID, NAV_TOGGLE_ID } from "./dom-ids";
import { conversationIdFromHash, hashForConversation } from "./hash-route";
import { applyTheme } from "./theme";
import { useShortcuts } from "./use-shortcuts";

/** The app shell; carries the readiness (`data-app-state`) and connection signals for tests. */
export function App() {
  const controller = useController();
  const phase = useAppState((s) => s.phase);
  const connection = useAppState((s) => s.connection);
  const currentId = useAppState((s) => s.currentId);
  const hasModel = useAppState((s) => !!s.engine?.model);
  const panelOpen = useAppState((s) => s.modelPanelOpen);
  const adaptersOpen = useAdapterState((s) => s.panelOpen);
  const settingsOpen = useSettingsState((s) => s.open);
  const memoryOpen = useMemoryState((s) => s.open);
  const privacyOpen = usePrivacyState((s) => s.open);
  const modelsOpen = useHubState((s) => s.open);
  const loadOpen = useLocalModelsState((s) => s.load !== null);
  const [navOpen, setNavOpen] = useState(false);
  const panelVisible = phase === "loaded" && (!hasModel || panelOpen);
  const browser = controller.api.platform.kind === "browser";

  const theme = useSettingsState((s) => s.settings?.theme ?? null);

  useShortcuts(controller);

  // The theme is an app setting: read it once the core answers (main.tsx painted the cached one).
  useEffect(() => {
    if (phase === "loaded") void controller.settings.load();
  }, [controller, phase]);
  useEffect(() => {
    if (theme) applyTheme(theme);
  }, [theme]);

  // Closing the drawer from inside it (Esc) puts focus back on the button that opened it.
  const closeNav = useCallback((returnFocus: boolean) => {
    setNavOpen(false);
    if (returnFocus) document.getElementById(NAV_TOGGLE_ID)?.focus();
  }, []);

  // URL hash -> store (back/forward, clicked links).
  useEffect(() => {
    const onHash = () => {
      controller.conversations.select(conversationIdFromHash(window.location.hash));
      setNavOpen(false);
    };
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, [controller]);

  // Store -> URL hash (new chat, created on send, deleted).
  useEffect(() => {
    if (phase !== "loaded") return;
    const hash = hashForConversation(currentId);
    if (window.location.hash !== hash && !(currentId === null && window.location.hash === "")) {
      window.history.pushState(null, "", hash);
    }
  }, [phase, currentId]);

  // Closing the page during the Undo window still deletes: the user asked for it.
  useEffect(() => {
    const onHide = () => controller.deletes.flush();
    window.addEventListener("pagehide", onHide);
    return () => window.removeEventListener("pagehide", onHide);
  }, [controller]);

  if (phase === "signedOut") {
    return (
      <div className="app app--blocked" data-app-state={phase}>
        <SignedOut />
      </div>
    );
  }

  if (phase === "database") {
    return (
      <div className="app app--blocked" data-app-state={phase}>
        <DatabaseScreen />
      </div>
    );
  }

  return (
    <div className="app" data-app-state={phase} data-connection={browser ? connection : undefined}>
      <a
        className="skip-link"
        href="#chat"
        onClick={(e) => {
          // Not a hash change: the hash is the conversation route.
          e.preventDefault();
          setNavOpen(false);
          document.getElementById(COMPOSER_INPUT_ID)?.focus();
        }}
      >
        Skip to chat
      </a>
      <ConversationNav open={navOpen} onClose={closeNav} />
      {navOpen && <div className="nav-backdrop" aria-hidden="true" onClick={() => setNavOpen(false)} />}
      <main className="main" id="chat">
        <h1 className="visually-hidden">Macaron</h1>
        <ModelBar
          navOpen={navOpen}
          onToggleNav={() => setNavOpen((o) => !o)}
          showEngineError={!panelVisible}
        />
        {browser && connection === "reconnecting" && phase !== "error" && (
          <div className="banner" role="status">
            Reconnecting…
          </div>
        )}
        {phase === "error" && <LoadError />}
        {phase === "loading" && <p className="loading">Loading…</p>}
        {panelVisible && <ModelPanel />}
        {phase !== "error" && <ChatView />}
      </main>
      <Toasts />
      {adaptersOpen && <AdaptersPanel />}
      {settingsOpen && <SettingsDialog />}
      {memoryOpen && <MemoryPanel />}
      {privacyOpen && <PrivacyDialog />}
      {modelsOpen && <ModelsDialog />}
      {/* After the Models dialog: it opens from there and stacks above it. */}
      {loadOpen && <LoadSettingsDialog onLoaded={() => controller.hub.setOpen(false)} />}
    </div>
  );
}

/**
 * The headless server does not know this browser any more (it restarted with a new key, or the
 * session was ended): say so, and how to get a new sign-in link. Retrying cannot help until a
 * link has been opened, so "I have opened a new link" checks again.
 */
function SignedOut() {
  const controller = useController();
  const currentId = useAppState((s) => s.currentId);
  const origin = window.location.origin;
  return (
    <section className="load-error signed-out" aria-labelledby="signed-out-heading">
      <h1 id="signed-out-heading">You are signed out</h1>
      <p role="alert">
        This browser is not signed in to the Macaron server at {origin}: the server was restarted with a new
        API key, or the session was ended.
      </p>
      <h2>Get a new sign-in link</h2>
      <ul>
        <li>
          In the terminal running the server (<code>npm run serve</code>): it prints a sign-in link when it
          starts, and a new one on <code>kill -USR2 &lt;pid&gt;</code>.
        </li>
        <li>
          With the API key:{" "}
          <code>curl -X POST -H &quot;Authorization: Bearer &lt;key&gt;&quot; {origin}/api/login-code</code>{" "}
          answers a link.
        </li>
      </ul>
      <p className="muted">A link works once, within 5 minutes. Open it in this browser.</p>
      <button type="button" className="button" onClick={() => void controller.start(currentId)}>
        I have opened a new link — check again
      </button>
    </section>
  );
}

function LoadError() {
  const controller = useController();
  const message = useAppState((s) => s.loadError);
  const currentId = useAppState((s) => s.currentId);
  return (
    <section className="load-error" aria-labelledby="load-error-heading">
      <h2 id="load-error-heading">Macaron could not start</h2>
      <p role="alert">{message}</p>
      <button
        type="button"
        className="button button--primary"
        onClick={() => void controller.start(currentId)}
      >
        Retry
      </button>
    </section>
  );
}
