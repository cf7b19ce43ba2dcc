import { useState } from "react";
import { Button, Dialog, DialogTrigger, Popover } from "react-aria-components";
import type { Release } from "../../../electron/api";
import { errorMessage } from "../api";
import { useAdapterState, useReleaseController } from "../app/controller-context";
import { releaseRow } from "./release-logic";

type Loaded =
  { state: "loading" } | { state: "done"; release: Release | null } | { state: "error"; message: string };

/**
 * Which release produced an answer (base model, harness, contract, live adapter versions),
 * fetched only when the user opens it: most answers are never asked about. The facts open in a
 * react-aria popover dialog, which places itself inside the viewport (flipping above the button
 * near the bottom edge, shifting left near the right edge) instead of hanging off the answer.
 */
export function ReleaseDetails({ messageId }: { messageId: string }) {
  const releases = useReleaseController();
  const adapters = useAdapterState((s) => s.adapters);
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const nameOf = (id: string) => adapters?.find((a) => a.id === id)?.name ?? id;

  const onOpenChange = (open: boolean) => {
    if (!open || (loaded && loaded.state !== "error")) return;
    setLoaded({ state: "loading" });
    releases.releaseForMessage(messageId).then(
      (release) => setLoaded({ state: "done", release }),
      (error: unknown) => setLoaded({ state: "error", message: errorMessage(error) }),
    );
  };

  return (
    <DialogTrigger onOpenChange={onOpenChange}>
      <Button className="button button--small button--ghost release-details__button">Release details</Button>
      <Popover className="release-details__panel" placement="bottom start" containerPadding={8}>
        <Dialog className="release-details__dialog" aria-label="Release of this answer">
          {loaded?.state === "loading" && <p role="status">Loading…</p>}
          {loaded?.state === "error" && <p role="alert">Could not read the release: {loaded.message}</p>}
          {loaded?.state === "done" && !loaded.release && (
            <p>This answer is older than the release history.</p>
          )}
          {loaded?.state === "done" && loaded.release && (
            <ReleaseSummary row={releaseRow(loaded.release, nameOf)} />
          )}
        </Dialog>
      </Popover>
    </DialogTrigger>
  );
}

function ReleaseSummary({ row }: { row: ReturnType<typeof releaseRow> }) {
  return (
    <dl className="release-details__facts">
      <dt>Release</dt>
      <dd>
        #{row.id}: {row.reason}
        {row.detail ? ` (${row.detail})` : ""}
      </dd>
      <dt>Adapters</dt>
      <dd>{row.adapters}</dd>
      <dt>Base model</dt>
      <dd>
        <code>{row.baseModel}</code>
      </dd>
      <dt>Harness</dt>
      <dd>
        <code>{row.harness}</code>
      </dd>
      <dt>Contract</dt>
      <dd>{row.contract}</dd>
    </dl>
  );
}
