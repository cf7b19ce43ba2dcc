import { useId, useState } from "react";
import { useAdapterState, useAppState, useAdapterController } from "../app/controller-context";
import type { HubAdapterFile } from "../../../electron/api";
import { hubFileKey } from "./adapter-controller";
import { formatBytes } from "../../../common/format-bytes";
import { fileName } from "../models/hub-logic";

/**
 * "Find adapters for this model": LoRA adapters on the hub whose base matches the loaded model
 * (GGUF files, and PEFT folders that are converted on install), each with the reason it
 * matches; Install downloads it and runs the same validation as a file install (its refusal is
 * shown as it comes).
 */
export function FindAdapters() {
  const adaptersController = useAdapterController();
  const model = useAppState((s) => s.engine?.model ?? null);
  const hub = useAdapterState((s) => s.hub);
  const [query, setQuery] = useState("");
  const id = useId();
  if (!model) return null;

  return (
    <section className="find-adapters" aria-labelledby={`${id}-heading`}>
      <h3 id={`${id}-heading`}>Find adapters for this model</h3>
      <p className="muted">
        Searches the model hub for LoRA adapters made for {model.name} ({model.architecture}).
      </p>
      <form
        role="search"
        className="adapter-install__row"
        onSubmit={(e) => {
          e.preventDefault();
          e.stopPropagation();
          void adaptersController.findForBase(query);
        }}
      >
        <label htmlFor={`${id}-q`} className="visually-hidden">
          Words to look for (optional)
        </label>
        <input
          id={`${id}-q`}
          className="input"
          type="search"
          autoComplete="off"
          placeholder="Optional words, e.g. coding"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <button type="submit" className="button" disabled={hub.searching}>
          {hub.searching ? "Searching…" : "Find adapters"}
        </button>
      </form>
      {hub.error && (
        <div className="form-error" role="alert">
          Could not search the hub: {hub.error}
        </div>
      )}
      {hub.results?.length === 0 && (
        <p className="muted" role="status">
          No adapters on the hub match this model{query.trim() ? ` and “${query.trim()}”` : ""}.
        </p>
      )}
      {hub.results && hub.results.length > 0 && (
        <ul className="find-adapters__list" aria-label="Adapters on the hub">
          {hub.results.map((r) => (
            <li key={r.repo} className="find-adapters__item">
              <p className="find-adapters__repo">
                <strong>{r.repo}</strong>
              </p>
              <p className="muted find-adapters__reason">Matches: {r.reason}</p>
              <ul className="find-adapters__files">
                {r.files.map((f) => {
                  const key = hubFileKey(r.repo, f.path);
                  const installing = hub.installing.includes(key);
                  const installed = hub.installed.includes(key);
                  const error = hub.installErrors[key];
                  const label = adapterLabel(f);
                  return (
                    <li key={f.path}>
                      <span>{label}</span> <span className="muted">{formatBytes(f.sizeBytes)}</span>{" "}
                      {installed ? (
                        <span className="badge badge--ok">Installed</span>
                      ) : (
                        <button
                          type="button"
                          className="button button--small"
                          aria-label={`Install ${label} from ${r.repo}${f.kind === "peft" ? ", converted for this model" : ""}`}
                          disabled={installing}
                          onClick={() => void adaptersController.installFromHub(r.repo, f.path)}
                        >
                          {installing
                            ? "Installing…"
                            : f.kind === "peft"
                              ? "Install (converts PEFT)"
                              : "Install"}
                        </button>
                      )}
                      {error && (
                        <span className="badge badge--error find-adapters__error" role="alert">
                          {error}
                        </span>
                      )}
                    </li>
                  );
                })}
              </ul>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** A GGUF by its file name; a PEFT folder as such, by its sub-folder when it is in one. */
function adapterLabel(f: HubAdapterFile): string {
  if (f.kind !== "peft") return fileName(f.path);
  const dir = f.path.split("/").slice(0, -1).join("/");
  return dir ? `PEFT adapter ${dir}/` : "PEFT adapter";
}
