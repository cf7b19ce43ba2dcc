/** "Local API server" rendered to HTML from a given store state (React's server renderer). */
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { LocalServerStatus } from "../../../electron/api";
import { ControllerProvider } from "../app/controller-context";
import { AppController } from "../state/app-controller";
import type { LocalServerState } from "./local-server-controller";
import { ScriptedApi } from "../testing/scripted-api";
import { LocalServerSettings } from "./LocalServerSettings";

const KEY = "ab".repeat(32);

function status(over: Partial<LocalServerStatus> = {}): LocalServerStatus {
  return {
    enabled: false,
    running: false,
    host: "127.0.0.1",
    port: 1234,
    url: null,
    apiKey: KEY,
    error: null,
    corsOrigins: [],
    ...over,
  };
}

function render(state: Partial<LocalServerState>): string {
  const controller = new AppController(new ScriptedApi({}));
  const store = controller.localServer.store;
  store.setState(state);
  // React's server renderer reads a zustand store's initial state: render the given one.
  store.getInitialState = store.getState;
  try {
    return renderToStaticMarkup(
      <ControllerProvider controller={controller}>
        <LocalServerSettings />
      </ControllerProvider>,
    );
  } finally {
    controller.dispose();
  }
}

describe("LocalServerSettings", () => {
  it("is an unchecked, labelled switch with the port when off, and shows no address or key", () => {
    const html = render({ status: status() });
    expect(html).toContain("<h3");
    expect(html).toContain("Local API server");
    expect(html).toMatch(
      /<input type="checkbox" role="switch"(?![^>]*checked)[^>]*\/>Serve the API on this computer/,
    );
    expect(html).toMatch(/<label for="[^"]+">Port<\/label><input id="[^"]+"[^>]*value="1234"/);
    expect(html).toContain("Works with OpenAI, Anthropic and Ollama clients");
    expect(html).toContain(">Off.</p>");
    expect(html).not.toContain("Copy address");
    expect(html).not.toContain(KEY);
  });

  it("shows the address with Copy and the key masked (never in the page) while running", () => {
    const url = "http://127.0.0.1:4321/v1";
    const html = render({ status: status({ enabled: true, running: true, port: 4321, url }) });
    expect(html).toMatch(/<input type="checkbox" role="switch"[^>]*checked=""[^>]*\/>Serve the API/);
    expect(html).toContain(`<code aria-label="Address">${url}</code>`);
    expect(html).toContain(">Copy address</button>");
    expect(html).toContain('aria-label="API key (hidden)"');
    expect(html).toMatch(/aria-pressed="false"[^>]*>Show key<\/button>/);
    expect(html).toContain(">Copy key</button>");
    expect(html).toContain(">Regenerate key…</button>");
    // The example names the address; the key stays a placeholder until shown.
    expect(html).toContain(`curl ${url}/models -H &quot;Authorization: Bearer YOUR_KEY&quot;`);
    expect(html).not.toContain(KEY);
    expect(html).toContain(">Running on port 4321.</p>");
  });

  it("says why it is not running when the port is taken", () => {
    const error = "Port 1234 is in use by another program. Choose another port, or quit that program.";
    const html = render({ status: status({ enabled: true, error }) });
    expect(html).toContain(`role="alert">${error}</div>`);
    expect(html).toContain(">Not running.</p>");
    expect(html).not.toContain("Copy address");
  });

  it("shows a failed call instead of the loading line", () => {
    const html = render({ status: null, error: "This build of the app cannot serve the local API." });
    expect(html).toContain('role="alert">This build of the app cannot serve the local API.</div>');
    expect(html).not.toContain("Loading…");
  });

  it("lists no web origin by default, with a labelled field to add one and what it allows", () => {
    const html = render({ status: status() });
    expect(html).toMatch(
      /<div class="local-server__cors" role="group" aria-labelledby="[^"]+"><h4 id="[^"]+">Allowed web origins \(CORS\)<\/h4>/,
    );
    expect(html).toContain("Web pages from these origins can call the API with the key");
    expect(html).toContain(">None: no web page can call it.</p>");
    expect(html).toMatch(
      /<label for="([^"]+)">Origin<\/label><input id="\1"[^>]*placeholder="http:\/\/localhost:5173"/,
    );
    // Nothing typed yet: Add is off; no restart note while the server is off.
    expect(html).toMatch(/<button type="submit"[^>]*disabled=""[^>]*>Add origin<\/button>/);
    expect(html).not.toContain("restarts the server");
  });

  it("lists the allowed origins with a named Remove button each, and says a change restarts the server", () => {
    const url = "http://127.0.0.1:1234/v1";
    const html = render({
      status: status({
        enabled: true,
        running: true,
        url,
        corsOrigins: ["http://localhost:5173", "https://app.example"],
      }),
    });
    expect(html).toContain('<ul class="local-server__origins" aria-label="Allowed origins">');
    for (const origin of ["http://localhost:5173", "https://app.example"])
      expect(html).toContain(
        `<li><code>${origin}</code><button type="button" class="button button--small button--ghost" aria-label="Remove ${origin}">Remove</button></li>`,
      );
    expect(html).toContain("Adding or removing one restarts the server.");
    expect(html).not.toContain("None: no web page");
  });
});
