import { useEffect, useId, useRef } from "react";
import { useHubController, useHubState } from "../app/controller-context";
import { formatBytes } from "../../../common/format-bytes";
import { formatCount, groupByTier, hubErrorHint, isActiveDownload, TIER_LABELS } from "./hub-logic";
import { DownloadRow } from "./DownloadRow";
import { HubRepoView } from "./HubRepoView";
import { HubTokenForm } from "./HubTokenForm";

/**
 * "Find a model": search the hub (debounced; Enter searches at once), the recommended list
 * before any search, one repo's files once chosen, and the downloads. Nothing remote is
 * rendered as markup or loaded (no model cards, no images): only names and numbers.
 */
export function ModelHub({ onLoad }: { onLoad: (path: string) => void }) {
  const hub = useHubController();
  const query = useHubState((s) => s.query);
  const repo = useHubState((s) => s.repo);
  const downloads = useHubState((s) => s.downloads);
  const searchId = useId();
  const searchRef = useRef<HTMLInputElement>(null);
  // The repo whose files were opened: Back puts focus on its button again.
  const lastRepo = useRef<string | null>(null);
  const listRef = useRef<HTMLDivElement>(null);

  // Opening the dialog on the list puts the cursor in the search box (after the dialog's own
  // focusing, which picks its first button).
  useEffect(() => {
    if (hub.store.getState().repo) return;
    const frame = requestAnimationFrame(() => {
      // Not when the user is moving between the tabs with the keyboard.
      if (document.activeElement?.closest('[role="tablist"]')) return;
      searchRef.current?.focus();
    });
    return () => cancelAnimationFrame(frame);
  }, [hub]);

  useEffect(() => {
    if (repo !== null || !lastRepo.current) return;
    const target = listRef.current?.querySelector<HTMLButtonElement>(
      `[data-repo="${CSS.escape(lastRepo.current)}"]`,
    );
    (target ?? searchRef.current)?.focus();
    lastRepo.current = null;
  }, [repo]);

  const open = (id: string, quant: string | null) => {
    lastRepo.current = id;
    void hub.openRepo(id, quant);
  };
  const selected = useHubState((s) => s.selectedFile);
  const hidden = useHubState((s) => s.hiddenDownloads);
  // The open repo's chosen file shows its download itself, not twice.
  const shown = downloads.filter(
    (d) =>
      d.kind === "model" &&
      !hidden.includes(d.id) &&
      (isActiveDownload(d) || d.state === "error" || d.state === "done") &&
      !(repo && d.repo === repo.repo && d.file === selected),
  );

  return (
    <div className="model-hub">
      {shown.length > 0 && (
        <section className="model-hub__downloads" aria-labelledby={`${searchId}-dl`}>
          <h3 id={`${searchId}-dl`}>Downloads</h3>
          <ul className="downloads">
            {shown.map((d) => (
              <DownloadRow key={d.id} download={d} onLoad={onLoad} />
            ))}
          </ul>
        </section>
      )}
      {repo ? (
        <HubRepoView onBack={() => void hub.openRepo(null)} onLoad={onLoad} />
      ) : (
        <>
          <form
            role="search"
            className="model-hub__search"
            onSubmit={(e) => {
              e.preventDefault();
              e.stopPropagation();
              void hub.search();
            }}
          >
            <label htmlFor={searchId}>Search Hugging Face for GGUF models</label>
            <div className="model-hub__search-row">
              <input
                ref={searchRef}
                id={searchId}
                className="input"
                type="search"
                autoComplete="off"
                spellCheck={false}
                placeholder="e.g. qwen2.5 1.5b instruct"
                value={query}
                onChange={(e) => hub.setQuery(e.target.value)}
              />
              <button type="submit" className="button">
                Search
              </button>
            </div>
          </form>
          <div ref={listRef}>
            <SearchResults onOpen={open} />
          </div>
        </>
      )}
    </div>
  );
}

/** The hub tags a repo of LoRA adapters so (they install from the Adapters panel). */
function isAdapterRepo(tags: readonly string[]): boolean {
  return tags.some((t) => t === "lora" || t.startsWith("base_model:adapter:"));
}

/** `owner/name`: the user typed a repo id. */
function looksLikeRepo(query: string): boolean {
  return /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/.test(query);
}

function SearchResults({ onOpen }: { onOpen: (repo: string, quant: string | null) => void }) {
  const hub = useHubController();
  const results = useHubState((s) => s.results);
  const searchedQuery = useHubState((s) => s.searchedQuery);
  const searching = useHubState((s) => s.searching);
  const error = useHubState((s) => s.searchError);
  const query = useHubState((s) => s.query);
  const headingId = useId();

  if (error) {
    return (
      <div className="hub-error">
        <div className="form-error" role="alert">
          Search failed: {error.message}
          {hubErrorHint(error.kind) && <span className="hub-error__hint"> {hubErrorHint(error.kind)}</span>}
        </div>
        {error.kind === "token" && <HubTokenForm />}
        <button type="button" className="button" onClick={() => void hub.search()}>
          Try again
        </button>
      </div>
    );
  }
  if (results === null || query.trim() === "") {
    return (
      <>
        {searching && <p role="status">Searching…</p>}
        <Recommended onOpen={onOpen} />
      </>
    );
  }
  return (
    <section aria-labelledby={headingId} aria-busy={searching}>
      <h3 id={headingId} className="model-hub__heading">
        Results for “{searchedQuery}”
      </h3>
      <p className="visually-hidden" role="status">
        {searching ? "Searching…" : `${results.length} model repo${results.length === 1 ? "" : "s"} found`}
      </p>
      {looksLikeRepo(searchedQuery) && !results.some((m) => m.repo === searchedQuery) && (
        <p>
          <button
            type="button"
            className="button"
            data-repo={searchedQuery}
            onClick={() => onOpen(searchedQuery, null)}
          >
            Open {searchedQuery}
          </button>{" "}
          <span className="muted">(the repo by its name, even if the search does not list it)</span>
        </p>
      )}
      {results.length === 0 ? (
        <div className="empty-state">
          <p>
            <strong>No GGUF models match “{searchedQuery}”</strong>
          </p>
          <p className="muted">Try fewer words, or the model family's name (qwen, llama, mistral, gemma).</p>
        </div>
      ) : (
        <ul className="hub-list">
          {results.map((m) => (
            <li key={m.repo} className="hub-item">
              <button
                type="button"
                className="hub-item__open"
                data-repo={m.repo}
                onClick={() => onOpen(m.repo, null)}
              >
                <span className="hub-item__name">{m.repo}</span>
                <span className="hub-item__meta muted">
                  {formatCount(m.downloads)} downloads · {formatCount(m.likes)} likes
                  {m.updatedAt ? ` · updated ${m.updatedAt.slice(0, 10)}` : ""}
                  {m.baseModel ? ` · based on ${m.baseModel}` : ""}
                </span>
                {m.gated && <span className="badge badge--warn">Gated</span>}
                {isAdapterRepo(m.tags) && <span className="badge">LoRA adapters</span>}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Recommended({ onOpen }: { onOpen: (repo: string, quant: string | null) => void }) {
  const hub = useHubController();
  const recommended = useHubState((s) => s.recommended);
  const error = useHubState((s) => s.recommendedError);
  const headingId = useId();

  return (
    <section aria-labelledby={headingId}>
      <h3 id={headingId} className="model-hub__heading">
        Recommended models
      </h3>
      {error && (
        <div className="hub-error">
          <div className="form-error" role="alert">
            Could not load the recommended models: {error}
          </div>
          <button type="button" className="button" onClick={() => void hub.loadRecommended()}>
            Try again
          </button>
        </div>
      )}
      {recommended === null && !error && <p role="status">Loading the recommended models…</p>}
      {recommended?.length === 0 && <p className="muted">No recommendations; search for a model above.</p>}
      {recommended &&
        groupByTier(recommended).map(([tier, models]) => (
          <div key={tier} className="hub-tier">
            <h4 className="hub-tier__title">{TIER_LABELS[tier]}</h4>
            <ul className="hub-list">
              {models.map((m) => (
                <li key={`${m.repo}:${m.quant}`} className="hub-item">
                  <button
                    type="button"
                    className="hub-item__open"
                    data-repo={m.repo}
                    onClick={() => onOpen(m.repo, m.quant)}
                  >
                    <span className="hub-item__name">{m.label}</span>
                    <span className="hub-item__meta muted">
                      {m.repo} · {m.quant} · about {formatBytes(m.approxSizeBytes)}
                    </span>
                    {m.note && <span className="hub-item__note">{m.note}</span>}
                  </button>
                </li>
              ))}
            </ul>
          </div>
        ))}
    </section>
  );
}
