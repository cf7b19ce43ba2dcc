import { useId, useState } from "react";
import type { Release } from "../../../electron/api";
import { errorMessage } from "../api";
import { useAdapterState, useReleaseController } from "../app/controller-context";
import { releaseRow } from "./release-logic";

type Loaded =
  { state: "loading" } | { state: "done"; release: Release | null } | { state: "error"; message: string };

/**
 * Which release produced an answer (base model, harness, contract, live adapter versions),
 * fetched only when the user opens it: most answers are never asked about.
 */
export function ReleaseDetails({ messageId }: { messageId: string }) {
  const releases = useReleaseController();
  const adapters = useAdapterState((s) => s.adapters);
  const [open, setOpen] = useState(false);
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const panelId = useId();
  const nameOf = (id: string) => adapters?.find((a) => a.id === id)?.name ?? id;

  const toggle = () => {
    setOpen(!open);
    if (open || (loaded && loaded.state !== "error")) return;
    setLoaded({ state: "loading" });
    releases.releaseForMessage(messageId).then(
      (release) => setLoaded({ state: "done", release }),
      (error: unknown) => setLoaded({ state: "error", message: errorMessage(error) }),
    );
  };

  return (
    <span className="release-details">
      <button
        type="button"
        className="button button--small button--ghost"
        aria-expanded={open}
        aria-controls={panelId}
        onClick={toggle}
      >
        Release
      </button>
      {open && (
        <span
          id={panelId}
          className="release-details__panel"
          role="group"
          aria-label="Release of this answer"
        >
          {loaded?.state === "loading" && "Loading…"}
          {loaded?.state === "error" && `Could not read the release: ${loaded.message}`}
          {loaded?.state === "done" && !loaded.release && "This answer is older than the release history."}
          {loaded?.state === "done" && loaded.release && (
            <ReleaseSummary row={releaseRow(loaded.release, nameOf)} />
          )}
        </span>
      )}
    </span>
  );
}

function ReleaseSummary({ row }: { row: ReturnType<typeof releaseRow> }) {
  return (
    <span className="release-details__facts">
      <span>
        Release #{row.id}: {row.reason}
        {row.detail ? ` (${row.detail})` : ""}
      </span>
      <span>Adapters: {row.adapters}</span>
      <span>
        Base model <code>{row.baseModel}</code>, harness <code>{row.harness}</code>, contract {row.contract}
      </span>
    </span>
  );
}
