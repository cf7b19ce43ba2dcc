import { useEffect, useId, useState } from "react";
import type { LocalServerStatus } from "../../../electron/api";
import { ConfirmButtons } from "../adapters/ConfirmButtons";
import { useLocalServerController, useLocalServerState } from "../app/controller-context";
import { copyText } from "../chat/clipboard";

const MIN_PORT = 1024;
const MAX_PORT = 65535;
const MASK = "•".repeat(24);

/**
 * "Local API server": the app serves its model API (/v1, OpenAI- and Anthropic-compatible, and
 * Ollama's /api/chat, /api/generate, /api/embed, …) on
 * 127.0.0.1 while it runs, like LM Studio's local server, for editors, agents and scripts on this
 * computer. Off until turned on here; shows the address and the key (masked until asked), and
 * why it is not running when the port is taken. The web origins allowed to call it (CORS, like
 * LM Studio's and Ollama's switch) are listed here too, none by default.
 */
export function LocalServerSettings() {
  const localServer = useLocalServerController();
  const status = useLocalServerState((s) => s.status);
  const error = useLocalServerState((s) => s.error);
  const busy = useLocalServerState((s) => s.busy);
  const headingId = useId();
  const hintId = useId();
  useEffect(() => {
    void localServer.load();
  }, [localServer]);

  return (
    <section className="settings-section local-server" aria-labelledby={headingId}>
      <h3 id={headingId}>Local API server</h3>
      <p id={hintId} className="muted">
        Lets editors, agents and scripts on this computer use the loaded model while the app runs. Works with
        OpenAI, Anthropic and Ollama clients; only this computer can connect, and every request needs the key.
      </p>
      {status === null && !error && <p role="status">Loading…</p>}
      {status && (
        <>
          <label className="switch-row">
            <input
              type="checkbox"
              role="switch"
              checked={status.enabled}
              disabled={busy}
              aria-describedby={hintId}
              onChange={(e) => void localServer.configure({ enabled: e.target.checked })}
            />
            Serve the API on this computer
          </label>
          <PortForm key={status.port} port={status.port} busy={busy} />
          {status.error && (
            <div className="form-error" role="alert">
              {status.error}
            </div>
          )}
          <p role="status" className="muted">
            {status.running ? `Running on port ${status.port}.` : status.enabled ? "Not running." : "Off."}
          </p>
          {status.running && status.url && <Connection status={status} url={status.url} busy={busy} />}
          <CorsOrigins origins={status.corsOrigins} running={status.running} busy={busy} />
        </>
      )}
      {error && (
        <div className="form-error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}

function PortForm({ port, busy }: { port: number; busy: boolean }) {
  const localServer = useLocalServerController();
  const [draft, setDraft] = useState(String(port));
  const inputId = useId();
  const hintId = useId();
  const wanted = Number(draft);
  const valid = /^\d+$/.test(draft.trim()) && wanted >= MIN_PORT && wanted <= MAX_PORT;
  const changed = valid && wanted !== port;
  return (
    <form
      className="local-server__port"
      onSubmit={(e) => {
        e.preventDefault();
        if (changed) void localServer.configure({ port: wanted });
      }}
    >
      <label htmlFor={inputId}>Port</label>
      <input
        id={inputId}
        className="input"
        inputMode="numeric"
        value={draft}
        aria-invalid={!valid}
        aria-describedby={hintId}
        onChange={(e) => setDraft(e.target.value)}
      />
      <button type="submit" className="button button--small" disabled={busy || !changed}>
        Use this port
      </button>
      <span id={hintId} className={valid ? "muted" : "form-error"}>
        {valid ? "1234 is LM Studio's default." : `A port from ${MIN_PORT} to ${MAX_PORT}.`}
      </span>
    </form>
  );
}

/** The address and key clients need, and a curl line to try them. */
function Connection({ status, url, busy }: { status: LocalServerStatus; url: string; busy: boolean }) {
  const localServer = useLocalServerController();
  const [shown, setShown] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [copied, setCopied] = useState<string | null>(null);
  const curlId = useId();
  const copy = async (what: string, text: string) => {
    setCopied((await copyText(text)) ? `${what} copied.` : `Could not copy the ${what.toLowerCase()}.`);
  };
  const curl = (key: string) => `curl ${url}/models -H "Authorization: Bearer ${key}"`;

  return (
    <div className="local-server__connection">
      <div className="settings-section__actions local-server__row">
        <span className="local-server__label" aria-hidden="true">
          Address
        </span>
        <code aria-label="Address">{url}</code>
        <button type="button" className="button button--small" onClick={() => void copy("Address", url)}>
          Copy address
        </button>
      </div>
      <div className="settings-section__actions local-server__row">
        <span className="local-server__label" aria-hidden="true">
          API key
        </span>
        <code aria-label={shown ? "API key" : "API key (hidden)"}>{shown ? status.apiKey : MASK}</code>
        <button
          type="button"
          className="button button--small"
          aria-pressed={shown}
          onClick={() => setShown(!shown)}
        >
          {shown ? "Hide key" : "Show key"}
        </button>
        <button
          type="button"
          className="button button--small"
          onClick={() => void copy("Key", status.apiKey)}
        >
          Copy key
        </button>
        {confirming ? (
          <span className="adapter-row__confirm" role="group" aria-label="Regenerate the key?">
            <span>Clients using the old key stop working.</span>
            <ConfirmButtons
              confirmLabel="Yes, new key"
              busy={busy}
              onConfirm={() =>
                void localServer.regenerateKey().then(() => {
                  setConfirming(false);
                  setShown(true);
                })
              }
              onCancel={() => setConfirming(false)}
            />
          </span>
        ) : (
          <button
            type="button"
            className="button button--small button--ghost"
            onClick={() => setConfirming(true)}
          >
            Regenerate key…
          </button>
        )}
      </div>
      <p className="muted">
        Set the address as the base URL and the key as the API key of an OpenAI client. Anthropic and Ollama
        clients take the address without <code>/v1</code> (Ollama&apos;s host), with the key sent as{" "}
        <code>Authorization: Bearer</code>. To try it:
      </p>
      <div className="settings-section__actions local-server__row">
        <pre className="local-server__curl" id={curlId} aria-label="Example request" tabIndex={0}>
          {curl(shown ? status.apiKey : "YOUR_KEY")}
        </pre>
        <button
          type="button"
          className="button button--small"
          aria-describedby={curlId}
          onClick={() => void copy("Example", curl(status.apiKey))}
        >
          Copy example
        </button>
      </div>
      <p role="status" className="muted" aria-live="polite">
        {copied}
      </p>
    </div>
  );
}

/**
 * The CORS allow-list: origins (`http://localhost:5173`) whose web pages may call the API with
 * the key. Each is added or removed at once; the server restarts to take the new list.
 */
function CorsOrigins({ origins, running, busy }: { origins: string[]; running: boolean; busy: boolean }) {
  const localServer = useLocalServerController();
  const [draft, setDraft] = useState("");
  const [error, setError] = useState<string | null>(null);
  const headingId = useId();
  const hintId = useId();
  const inputId = useId();
  const errorId = useId();
  return (
    <div className="local-server__cors" role="group" aria-labelledby={headingId}>
      <h4 id={headingId}>Allowed web origins (CORS)</h4>
      <p id={hintId} className="muted">
        Web pages from these origins can call the API with the key; pages from anywhere else cannot.
        {running ? " Adding or removing one restarts the server." : ""}
      </p>
      {origins.length > 0 ? (
        <ul className="local-server__origins" aria-label="Allowed origins">
          {origins.map((origin) => (
            <li key={origin}>
              <code>{origin}</code>
              <button
                type="button"
                className="button button--small button--ghost"
                aria-label={`Remove ${origin}`}
                disabled={busy}
                onClick={() => void localServer.removeCorsOrigin(origin)}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">None: no web page can call it.</p>
      )}
      <form
        className="local-server__add-origin"
        onSubmit={(e) => {
          e.preventDefault();
          void localServer.addCorsOrigin(draft).then(({ saved, error }) => {
            setError(error);
            if (saved) setDraft("");
          });
        }}
      >
        <label htmlFor={inputId}>Origin</label>
        <input
          id={inputId}
          className="input"
          placeholder="http://localhost:5173"
          autoComplete="off"
          spellCheck={false}
          value={draft}
          aria-invalid={error !== null}
          aria-describedby={error === null ? hintId : `${errorId} ${hintId}`}
          onChange={(e) => {
            setDraft(e.target.value);
            setError(null);
          }}
        />
        <button type="submit" className="button button--small" disabled={busy || draft.trim() === ""}>
          Add origin
        </button>
        {error !== null && (
          <span id={errorId} className="form-error" role="alert">
            {error}
          </span>
        )}
      </form>
    </div>
  );
}
