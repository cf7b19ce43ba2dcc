// First: in dev, React Fast Refresh needs its preamble, and the CSP (script-src 'self') blocks
// the inline script the React plugin would otherwise inject. Empty in production builds.
import "@vitejs/plugin-react/preamble";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { createApiClient } from "./api";
import { App } from "./app/App";
import { ControllerProvider } from "./app/controller-context";
import { conversationIdFromHash } from "./app/hash-route";
import { applyTheme, cachedTheme } from "./app/theme";
import { AppController } from "./state/app-controller";
import "./styles/base.css";
import "./styles/layout.css";
import "./styles/chat.css";
import "./styles/adapters.css";
import "./styles/memory.css";
import "./styles/releases.css";
import "./styles/models.css";
import "./styles/tools.css";

// Before the first render: the last theme chosen here, until the settings answer.
applyTheme(cachedTheme());

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");

const controller = new AppController(createApiClient());
void controller.start(conversationIdFromHash(window.location.hash));

createRoot(root).render(
  <StrictMode>
    <ControllerProvider controller={controller}>
      <App />
    </ControllerProvider>
  </StrictMode>,
);
