import { useId } from "react";
import type { AdapterVersionInfo, ContractSummary, GateProgress } from "../../../electron/api";
import { useReleaseController, useReleaseState } from "../app/controller-context";
import { formatBytes } from "../../../common/format-bytes";
import {
  describeContract,
  describeGate,
  failingCases,
  shortSha,
  sourceLabel,
  versionBadge,
  versionKey,
} from "./release-logic";

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/**
 * One version of an adapter in its history: status (with the gate's progress while it runs),
 * where it came from, release notes, the contract result, and what can be done with it.
 */
export function VersionCard({ info }: { info: AdapterVersionInfo }) {
  const releases = useReleaseController();
  const key = versionKey(info.adapterId, info.version);
  const gate = useReleaseState((s) => s.gates[key]);
  const busy = useReleaseState((s) => s.busy.includes(key));
  const headingId = useId();
  const badge = versionBadge(info, gate);
  const running = badge.tone === "busy";

  return (
    <article className={`version version--${info.status}`} aria-labelledby={headingId}>
      <div className="version__header">
        <h5 id={headingId}>Version {info.version}</h5>
        <span className={`version-badge version-badge--${badge.tone}`}>{badge.label}</span>
        {badge.progress && (
          <span className="version__progress">
            <progress
              value={badge.done}
              max={Math.max(1, badge.total)}
              aria-label={`Contract progress of version ${info.version}`}
            />
            <span>{badge.progress}</span>
          </span>
        )}
      </div>
      <dl className="version__facts">
        <dt>Source</dt>
        <dd>{sourceLabel(info.source)}</dd>
        <dt>Parent</dt>
        <dd>{info.lineage.parent ?? "none"}</dd>
        <dt>Trained from</dt>
        <dd className="version__wrap">{info.lineage.trainedFrom}</dd>
        <dt>Installed</dt>
        <dd>{timeFormat.format(info.installedAt)}</dd>
        {info.promotedAt !== null && (
          <>
            <dt>{info.live ? "Live since" : "Last made live"}</dt>
            <dd>{timeFormat.format(info.promotedAt)}</dd>
          </>
        )}
        <dt>File</dt>
        <dd>
          {formatBytes(info.sizeBytes)}, sha256 <code title={info.sha256}>{shortSha(info.sha256)}</code>
          {!info.fileKept && " (deleted)"}
        </dd>
      </dl>
      {info.releaseNotes && (
        <p className="version__notes">
          <span className="muted">Release notes: </span>
          {info.releaseNotes}
        </p>
      )}
      {info.statusReason &&
        !running &&
        !(info.contract && (info.status === "live" || info.status === "rejected")) && (
          <p className="muted version__reason">{info.statusReason}</p>
        )}
      {running && gate && <p className="muted">{describeGate(gate)}</p>}
      {!running && gate?.state === "error" && (
        <p className="form-error" role="alert">
          {describeGate(gate)}
        </p>
      )}
      {info.contract ? <ContractResult contract={info.contract} /> : <NoContract info={info} gate={gate} />}
      <VersionActions
        info={info}
        busy={busy || running}
        onRollback={() => void releases.rollback(info.adapterId, info.version)}
        onRun={() => void releases.runContract(info.adapterId, info.version)}
      />
    </article>
  );
}

function NoContract({ info, gate }: { info: AdapterVersionInfo; gate: GateProgress | undefined }) {
  if (gate && gate.state !== "error") return null;
  const text =
    info.source === "install"
      ? "Installed directly: no contract run on this version."
      : "Not evaluated by the contract yet.";
  return <p className="muted">{text}</p>;
}

function VersionActions({
  info,
  busy,
  onRollback,
  onRun,
}: {
  info: AdapterVersionInfo;
  busy: boolean;
  onRollback: () => void;
  onRun: () => void;
}) {
  if (info.status === "retired") {
    return info.fileKept ? (
      <div className="version__actions">
        <button type="button" className="button button--small" disabled={busy} onClick={onRollback}>
          Roll back to {info.version}
        </button>
      </div>
    ) : (
      <p className="muted">Its file was deleted: it can no longer be rolled back to.</p>
    );
  }
  if (info.status === "staged" || info.status === "rejected") {
    return (
      <div className="version__actions">
        <button
          type="button"
          className="button button--small"
          disabled={busy || !info.fileKept}
          onClick={onRun}
        >
          Run contract
        </button>
        {!info.fileKept && <span className="muted">Its file was deleted.</span>}
      </div>
    );
  }
  return null;
}

/** A contract run: passed, or the failing cases with what each failed assertion said. */
function ContractResult({ contract }: { contract: ContractSummary }) {
  const failing = failingCases(contract);
  return (
    <div className={`version__contract version__contract--${contract.passed ? "passed" : "failed"}`}>
      <p>{describeContract(contract)}</p>
      {!contract.passed && contract.reasons.length > 0 && (
        <ul className="version__reasons" aria-label="Why it failed">
          {contract.reasons.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      )}
      {failing.length > 0 && (
        <ul className="version__failing" aria-label="Failing cases">
          {failing.map((c) => (
            <li key={c.id}>
              <strong>{c.id}</strong>
              {c.description && <span className="muted"> — {c.description}</span>}
              {c.details.length > 0 && (
                <ul>
                  {c.details.map((d, i) => (
                    <li key={i}>{d}</li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
      )}
      <details className="version__cases">
        <summary>All {contract.cases.length} cases</summary>
        <ul>
          {contract.cases.map((c) => (
            <li key={c.id}>
              <span className={c.passed ? "version__case-ok" : "version__case-failed"}>
                {c.passed ? "Passed" : "Failed"}
              </span>{" "}
              <strong>{c.id}</strong> <span className="muted">({Math.round(c.latencyMs)} ms)</span>
              {c.output && <pre className="version__output">{c.output.slice(0, 300)}</pre>}
            </li>
          ))}
        </ul>
      </details>
    </div>
  );
}
