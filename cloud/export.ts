/**
 * Turns stored feedback into the JSONL chat datasets LoRA trainers read (the pipeline lives in
 * cloud/prepare/):
 * - sft: `{"messages":[{role, content}, …]}` from answers rated good and from corrections (the
 *   correction is the target); a thumbs-down answer is never a target. Answers that called tools
 *   (the Agent's trajectories) are OpenAI-style `{"messages":[…, {role:"assistant", content,
 *   tool_calls}, {role:"tool", tool_call_id, content}, …, {role:"assistant", content}],
 *   "tools":[…]}` lines, only when every call was allowed and answered and no rating or
 *   follow-up said the answer was wrong (prepare/trajectory.ts);
 * - preference (TRL's conversational format): `{"prompt":[…], "chosen":[assistant], "rejected":[assistant]}`
 *   from regenerations (chosen = the new answer), corrections (chosen = the correction) and a
 *   good and a bad rating on the same prompt; for answers that called tools, both sides carry
 *   their calls and results (and `tools`): an allowed-and-answered trajectory chosen over a
 *   denied, invalid, failed, stopped or bad-rated one to the same prompt;
 * - groups: users' answers that called tools, succeeded and failed, each prompt's as one GRPO
 *   group `{"prompt":[…], "completions":[[…calls, results, answer], …], "rewards":[1, 0, …],
 *   "tools":[…], "outcome":[…], "source":"user-trajectory"}`, with `"baseline":0.5` when the
 *   rewards are all equal (a lone failure is then trained away from; prepare/groups.ts).
 * Lines are filtered (malformed, consent, PII, thumbs-down, length, duplicates, near-duplicates),
 * split into train and held-out by a hash of the prompt, and every count is reported.
 */
import { prepareExport, type PiiScan, type PreparedExport, type PrepareOptions } from "./prepare/prepare";
import { BASE_DOMAIN, type DomainCount, type ExportSource } from "./prepare/source";
import { prepareExportStream, type StreamedExport } from "./prepare/stream";
import type { CloudStore, ItemFilter, Snapshot, StoredItem } from "./store/store";

export type { ExportType } from "./prepare/candidates";
export type { ExportReport } from "./prepare/report";
export type { Split } from "./prepare/split";
export type { PiiScan, PreparedExport, PrepareOptions, StreamedExport };
export { prepareExport };

/**
 * What one export reads, from one snapshot of either engine, collected into arrays (the
 * ExportSource of prepare/source.ts). Only the in-memory export (exportDataset, the oracle the
 * streaming export is tested against) uses it.
 */
export async function readSnapshotSource(snap: Snapshot, domain: string): Promise<ExportSource> {
  const collect = async (it: AsyncIterable<StoredItem>) => {
    const out: StoredItem[] = [];
    for await (const row of it) out.push(row);
    return out;
  };
  const items = await collect(snap.items(domainFilter(domain)));
  const ratings = await collect(snap.items({ kind: "rating" }));
  return { items, ratings, domains: await domainCounts(snap) };
}

/** The store filter of one export domain: "base" also takes the items stored with no domain. */
export function domainFilter(domain: string): ItemFilter {
  return domain === BASE_DOMAIN ? { domain, orNullDomain: true } : { domain };
}

async function domainCounts(snap: Snapshot): Promise<Record<string, DomainCount>> {
  const domains: Record<string, DomainCount> = {};
  for (const r of await snap.domainCounts()) {
    const name = r.domain ?? BASE_DOMAIN;
    const d = (domains[name] ??= { items: 0, byKind: {} });
    d.items += r.n;
    d.byKind[r.kind] = (d.byKind[r.kind] ?? 0) + r.n;
  }
  return domains;
}

/**
 * Both splits and the report of one domain's dataset, read from the store in one snapshot and
 * prepared in memory (memory grows with the domain): the reference streamDataset must equal.
 */
export async function exportDataset(
  store: CloudStore,
  domain: string,
  opts: PrepareOptions,
): Promise<PreparedExport> {
  const source = await store.withSnapshot((snap) => readSnapshotSource(snap, domain));
  return prepareExport({ domain, ...source }, opts);
}

/**
 * One domain's dataset in bounded memory (prepare/stream.ts): every read of the store happens
 * in one snapshot, which ends before this resolves (ingest is never held up by a slow
 * download); the report is complete then, and `lines(split)` reads the scratch file. The
 * caller must drain lines() or call close().
 */
export function streamDataset(
  store: CloudStore,
  domain: string,
  opts: PrepareOptions,
  scratchDir?: string,
): Promise<StreamedExport> {
  const filter = domainFilter(domain);
  return store.withSnapshot((snap) =>
    prepareExportStream(
      {
        items: () => snap.items(filter),
        ratings: () => snap.items({ kind: "rating" }),
        followUps: () => snap.items({ ...filter, kind: "follow_up" }),
        domains: () => domainCounts(snap),
      },
      domain,
      opts,
      scratchDir,
    ),
  );
}
