import { useAdapterState, useReleaseState } from "../app/controller-context";
import { releaseRow } from "../adapters/release-logic";

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

/**
 * The release history, newest first: each time the live adapter set, the base model, the
 * harness or the contract changed. Every answer is traced to one of these.
 */
export function ReleaseHistory() {
  const releases = useReleaseState((s) => s.releases);
  const error = useReleaseState((s) => s.releasesError);
  const adapters = useAdapterState((s) => s.adapters);
  const nameOf = (id: string) => adapters?.find((a) => a.id === id)?.name ?? id;

  return (
    <section className="settings-section" aria-labelledby="release-history-heading">
      <h3 id="release-history-heading">Release history</h3>
      {error && (
        <div className="form-error" role="alert">
          Could not read the release history: {error}
        </div>
      )}
      {releases === null && !error && <p role="status">Loading…</p>}
      {releases?.length === 0 && (
        <p className="muted">No releases yet: one is recorded when a model is loaded.</p>
      )}
      {releases && releases.length > 0 && (
        <div className="table-scroll release-history">
          <table className="adapters-table" aria-labelledby="release-history-heading">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Change</th>
                <th scope="col">Live adapters</th>
                <th scope="col">Base model</th>
                <th scope="col">Harness</th>
                <th scope="col">Contract</th>
              </tr>
            </thead>
            <tbody>
              {releases.map((r) => {
                const row = releaseRow(r, nameOf);
                return (
                  <tr key={r.id}>
                    <td data-label="Time">{timeFormat.format(r.createdAt)}</td>
                    <td data-label="Change">
                      {row.reason}
                      {row.detail && <span className="muted release-history__detail">{row.detail}</span>}
                    </td>
                    <td data-label="Live adapters">{row.adapters}</td>
                    <td data-label="Base model">
                      <code title={r.baseModelSha256 ?? undefined}>{row.baseModel}</code>
                    </td>
                    <td data-label="Harness">
                      <code>{row.harness}</code>
                    </td>
                    <td data-label="Contract">{row.contract}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
