import { useEffect, useId, useRef, useState } from "react";
import type { McpServerStatus, ToolInfo } from "../../../electron/api";
import { ConfirmButtons } from "../adapters/ConfirmButtons";
import { useMcpController, useMcpState } from "../app/controller-context";
import { JsonFileInput } from "../app/JsonFileInput";
import { EMPTY_SERVER_FORM, SERVER_STATE_LABEL, serverFromForm } from "../chat/tool-logic";
import type { ServerForm } from "../chat/tool-logic";

// mcp.import takes at most this many characters; a bigger file is refused before it is read.
const MAX_IMPORT_CHARS = 1_000_000;

/**
 * "Tools & MCP servers": the servers the user added (state, error, what starts them, their
 * tools with on/off switches, logs, restart, remove), adding one by hand or from an
 * `mcpServers` file of another app, and the app's built-in tools. A server starts only once
 * the user added it here (or with --mcp-config), and no tool runs without the user's
 * permission in the chat.
 */
export function McpServersSettings() {
  const mcpController = useMcpController();
  const servers = useMcpState((s) => s.servers);
  const loadError = useMcpState((s) => s.loadError);
  const headingId = useId();
  useEffect(() => {
    void mcpController.load();
  }, [mcpController]);

  return (
    <section className="settings-section mcp-settings" aria-labelledby={headingId}>
      <h3 id={headingId}>Tools &amp; MCP servers</h3>
      <p className="muted">
        When the Agent specialist answers, it can call these tools. Every call asks you first. MCP servers are
        programs or URLs that offer tools; a server gets only the environment you give it here.
      </p>
      {loadError && (
        <div className="form-error" role="alert">
          {loadError}
        </div>
      )}
      {servers === null && !loadError && <p role="status">Loading servers…</p>}
      {servers && servers.length === 0 && (
        <p className="mcp-settings__empty">
          No MCP servers yet. Add one below, or import the <code>mcpServers</code> file of another app.
        </p>
      )}
      {servers && servers.length > 0 && (
        <ul className="mcp-servers" aria-label="MCP servers">
          {servers.map((server) => (
            <li key={server.name}>
              <ServerCard server={server} />
            </li>
          ))}
        </ul>
      )}
      <AddServerForm />
      <ImportServers />
      <BuiltinTools />
    </section>
  );
}

const STATE_CLASS: Record<McpServerStatus["state"], string> = {
  starting: "",
  ready: " mcp-state--ready",
  failed: " mcp-state--bad",
  crashed: " mcp-state--bad",
  stopped: "",
};

function ServerCard({ server }: { server: McpServerStatus }) {
  const mcpController = useMcpController();
  const busy = useMcpState((s) => s.busy.includes(server.name));
  const error = useMcpState((s) => s.errors[server.name] ?? null);
  const logs = useMcpState((s) => s.logs[server.name]);
  const [confirming, setConfirming] = useState(false);
  const headingId = useId();

  return (
    <article className="mcp-server" aria-labelledby={headingId}>
      <div className="mcp-server__header">
        <h4 id={headingId}>{server.name}</h4>
        <span className={`badge mcp-state${STATE_CLASS[server.state]}`}>
          {SERVER_STATE_LABEL[server.state]}
        </span>
        <span className="muted">{server.transport === "stdio" ? "command (stdio)" : "Streamable HTTP"}</span>
      </div>
      <p className="mcp-server__target">
        <code>{server.target}</code>
      </p>
      {server.envKeys.length > 0 && (
        <p className="muted mcp-server__env">
          Environment: {server.envKeys.join(", ")} <span>(values hidden)</span>
        </p>
      )}
      {server.error && (
        <div className="form-error" role="alert">
          {server.error}
        </div>
      )}
      {server.tools.length > 0 ? (
        <ToolList label={`Tools of ${server.name}`} tools={server.tools} busy={busy} />
      ) : (
        server.state === "ready" && <p className="muted">This server offers no tools.</p>
      )}
      {error && (
        <div className="form-error" role="alert">
          {error}
        </div>
      )}
      {logs && (
        <pre className="mcp-server__logs" aria-label={`Logs of ${server.name}`} tabIndex={0}>
          {logs.length > 0 ? logs.join("\n") : "No log lines yet."}
        </pre>
      )}
      <div className="settings-section__actions">
        <button
          type="button"
          className="button button--small"
          aria-expanded={!!logs}
          onClick={() =>
            logs ? mcpController.hideLogs(server.name) : void mcpController.loadLogs(server.name)
          }
        >
          {logs ? "Hide logs" : `Show logs (${server.logLines})`}
        </button>
        <button
          type="button"
          className="button button--small"
          disabled={busy}
          onClick={() => void mcpController.restart(server.name)}
        >
          Restart
        </button>
        {confirming ? (
          <ConfirmButtons
            confirmLabel={`Yes, remove ${server.name}`}
            busy={busy}
            onConfirm={() => void mcpController.remove(server.name)}
            onCancel={() => setConfirming(false)}
          />
        ) : (
          <button
            type="button"
            className="button button--small button--ghost"
            aria-label={`Remove ${server.name}`}
            disabled={busy}
            onClick={() => setConfirming(true)}
          >
            Remove
          </button>
        )}
      </div>
    </article>
  );
}

/** Tools with their on/off switch; a tool that is off is never offered to the model. */
function ToolList({ label, tools, busy }: { label: string; tools: readonly ToolInfo[]; busy: boolean }) {
  const mcpController = useMcpController();
  return (
    <ul className="mcp-tools" aria-label={label}>
      {tools.map((tool) => (
        <li key={`${tool.server}/${tool.name}`} className="mcp-tool">
          <label>
            <input
              type="checkbox"
              checked={tool.enabled}
              disabled={busy}
              onChange={(e) => void mcpController.setToolEnabled(tool.server, tool.name, e.target.checked)}
            />
            <code>{tool.name}</code>
          </label>
          {tool.description && <span className="muted mcp-tool__description">{tool.description}</span>}
        </li>
      ))}
    </ul>
  );
}

function AddServerForm() {
  const mcpController = useMcpController();
  const adding = useMcpState((s) => s.adding);
  const addError = useMcpState((s) => s.addError);
  const [form, setForm] = useState<ServerForm>(EMPTY_SERVER_FORM);
  const [problem, setProblem] = useState<string | null>(null);
  const id = useId();
  const set = (patch: Partial<ServerForm>) => setForm((f) => ({ ...f, ...patch }));

  const submit = async () => {
    const checked = serverFromForm(form);
    if (!checked.ok) {
      setProblem(checked.error);
      return;
    }
    setProblem(null);
    if (await mcpController.add(checked.name, checked.spec)) setForm(EMPTY_SERVER_FORM);
  };

  const error = problem ?? addError;
  return (
    <details className="mcp-add">
      <summary>Add server</summary>
      <form
        className="mcp-add__form"
        aria-label="Add an MCP server"
        onSubmit={(e) => {
          e.preventDefault();
          // Inside the Settings dialog, whose owner must not see this submit.
          e.stopPropagation();
          void submit();
        }}
      >
        <div className="field">
          <label htmlFor={`${id}-name`}>Server name</label>
          <input
            id={`${id}-name`}
            className="input"
            autoComplete="off"
            spellCheck={false}
            value={form.name}
            onChange={(e) => set({ name: e.target.value })}
          />
        </div>
        <fieldset className="mcp-add__transport">
          <legend>How it runs</legend>
          <label>
            <input
              type="radio"
              name={`${id}-transport`}
              checked={form.transport === "stdio"}
              onChange={() => set({ transport: "stdio" })}
            />
            A command on this computer (stdio)
          </label>
          <label>
            <input
              type="radio"
              name={`${id}-transport`}
              checked={form.transport === "http"}
              onChange={() => set({ transport: "http" })}
            />
            A URL (Streamable HTTP)
          </label>
        </fieldset>
        {form.transport === "stdio" ? (
          <>
            <div className="field">
              <label htmlFor={`${id}-command`}>Command</label>
              <input
                id={`${id}-command`}
                className="input"
                autoComplete="off"
                spellCheck={false}
                placeholder="npx"
                value={form.command}
                onChange={(e) => set({ command: e.target.value })}
              />
            </div>
            <div className="field">
              <label htmlFor={`${id}-args`}>Arguments, one per line</label>
              <textarea
                id={`${id}-args`}
                className="input"
                rows={3}
                spellCheck={false}
                placeholder={"-y\n@modelcontextprotocol/server-everything"}
                value={form.args}
                onChange={(e) => set({ args: e.target.value })}
              />
            </div>
            <div className="field">
              <label htmlFor={`${id}-env`}>Environment, KEY=VALUE per line</label>
              <textarea
                id={`${id}-env`}
                className="input"
                rows={2}
                spellCheck={false}
                aria-describedby={`${id}-env-hint`}
                value={form.env}
                onChange={(e) => set({ env: e.target.value })}
              />
              <p id={`${id}-env-hint`} className="muted">
                The server gets only these variables (and PATH to find the command).
              </p>
            </div>
            <div className="field">
              <label htmlFor={`${id}-cwd`}>Working folder (optional)</label>
              <input
                id={`${id}-cwd`}
                className="input"
                autoComplete="off"
                spellCheck={false}
                value={form.cwd}
                onChange={(e) => set({ cwd: e.target.value })}
              />
            </div>
          </>
        ) : (
          <>
            <div className="field">
              <label htmlFor={`${id}-url`}>URL</label>
              <input
                id={`${id}-url`}
                className="input"
                type="url"
                autoComplete="off"
                spellCheck={false}
                placeholder="http://127.0.0.1:3001/mcp"
                value={form.url}
                onChange={(e) => set({ url: e.target.value })}
              />
            </div>
            <div className="field">
              <label htmlFor={`${id}-headers`}>Headers, Name: value per line</label>
              <textarea
                id={`${id}-headers`}
                className="input"
                rows={2}
                spellCheck={false}
                placeholder="Authorization: Bearer …"
                value={form.headers}
                onChange={(e) => set({ headers: e.target.value })}
              />
            </div>
          </>
        )}
        {error && (
          <div className="form-error" role="alert">
            {error}
          </div>
        )}
        <div className="settings-section__actions">
          <button type="submit" className="button button--primary" disabled={adding}>
            {adding ? "Adding…" : "Add server"}
          </button>
        </div>
      </form>
    </details>
  );
}

/** Paste or choose an `mcpServers` JSON file; each server is added or refused on its own. */
function ImportServers() {
  const mcpController = useMcpController();
  const importing = useMcpState((s) => s.importing);
  const outcome = useMcpState((s) => s.importOutcome);
  const importError = useMcpState((s) => s.importError);
  const [json, setJson] = useState("");
  const [fileError, setFileError] = useState<string | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const id = useId();

  const run = async (text: string) => {
    const result = await mcpController.importJson(text);
    if (result && result.errors.length === 0) setJson("");
  };

  const chooseFile = async (file: File) => {
    setFileError(null);
    if (file.size > MAX_IMPORT_CHARS) {
      setFileError("The file is larger than 1 MB; an mcpServers file is much smaller.");
      return;
    }
    const text = await file.text();
    setJson(text);
    await run(text);
  };

  return (
    <details className="mcp-import">
      <summary>Import mcpServers JSON</summary>
      <form
        className="mcp-add__form"
        aria-label="Import MCP servers"
        onSubmit={(e) => {
          e.preventDefault();
          e.stopPropagation();
          void run(json);
        }}
      >
        <div className="field">
          <label htmlFor={`${id}-json`}>mcpServers JSON</label>
          <textarea
            id={`${id}-json`}
            className="input mcp-import__json"
            rows={6}
            spellCheck={false}
            placeholder={'{ "mcpServers": { "name": { "command": "…", "args": [] } } }'}
            value={json}
            onChange={(e) => setJson(e.target.value)}
          />
        </div>
        <div className="settings-section__actions">
          <button type="submit" className="button" disabled={importing}>
            {importing ? "Importing…" : "Import"}
          </button>
          <button
            type="button"
            className="button button--ghost"
            disabled={importing}
            onClick={() => fileInput.current?.click()}
          >
            Choose a file…
          </button>
          <JsonFileInput
            inputRef={fileInput}
            label="Import MCP servers from a file"
            onFile={(file) => void chooseFile(file)}
          />
        </div>
        {(fileError ?? importError) && (
          <div className="form-error" role="alert">
            {fileError ?? importError}
          </div>
        )}
        {outcome && (
          <div className="mcp-import__outcome" role="status">
            <p>{outcome.added.length > 0 ? `Added ${outcome.added.join(", ")}.` : "No server was added."}</p>
            {outcome.errors.length > 0 && (
              <ul className="mcp-import__errors" aria-label="Servers not added">
                {outcome.errors.map((e) => (
                  <li key={e.name}>
                    <strong>{e.name}</strong>: {e.message}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
      </form>
    </details>
  );
}

function BuiltinTools() {
  const builtins = useMcpState((s) => s.builtins);
  const busy = useMcpState((s) => s.busy.includes("builtin"));
  const error = useMcpState((s) => s.errors["builtin"] ?? null);
  const headingId = useId();
  if (builtins === null) return null;
  return (
    <div className="mcp-builtins" role="group" aria-labelledby={headingId}>
      <h4 id={headingId}>Built-in tools</h4>
      {builtins.length === 0 ? (
        <p className="muted">No built-in tools.</p>
      ) : (
        <ToolList label="Built-in tools" tools={builtins} busy={busy} />
      )}
      {error && (
        <div className="form-error" role="alert">
          {error}
        </div>
      )}
    </div>
  );
}
