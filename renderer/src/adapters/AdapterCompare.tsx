import { useState } from "react";
import type { AdapterInfo } from "../../../electron/api";
import { useAdapterState, useAdapterController } from "../app/controller-context";
import type { CompareState } from "./adapter-controller";

/** One test prompt answered by the base model alone and with the adapter, side by side. */
export function AdapterCompare({ adapter, compare }: { adapter: AdapterInfo; compare: CompareState }) {
  const adapters = useAdapterController();
  const [prompt, setPrompt] = useState(compare.prompt);
  const running = useAdapterState((s) => s.compare?.status === "running");
  const headingId = `compare-${adapter.id}-heading`;

  return (
    <section className="adapter-compare" aria-labelledby={headingId}>
      <h4 id={headingId}>Compare {adapter.name} with the base model</h4>
      <form
        className="adapter-compare__form"
        onSubmit={(e) => {
          e.preventDefault();
          void adapters.compare(adapter.id, prompt);
        }}
      >
        <label htmlFor="compare-prompt">Test prompt</label>
        <input
          id="compare-prompt"
          className="input"
          type="text"
          autoComplete="off"
          value={prompt}
          placeholder="e.g. Write a function that reverses a string"
          onChange={(e) => setPrompt(e.target.value)}
        />
        <button type="submit" className="button button--primary" disabled={running}>
          Compare
        </button>
      </form>
      {running && <p role="status">Answering with both…</p>}
      {compare.status === "error" && compare.error && (
        <div className="form-error" role="alert">
          {compare.error}
        </div>
      )}
      {compare.status === "done" && (
        <div className="adapter-compare__results">
          <div>
            <h5>Base model</h5>
            <pre className="adapter-compare__output">{compare.base}</pre>
          </div>
          <div>
            <h5>{adapter.name}</h5>
            <pre className="adapter-compare__output">{compare.adapter}</pre>
          </div>
        </div>
      )}
    </section>
  );
}
