/**
 * The router's stage of the improvement cycle (issue 29): trains a routing head
 * (electron/core/router/routing-head.ts) for one base from
 *   - the adapters' routing examples (their manifests),
 *   - the seed training prompts per domain (`<domain>.train.jsonl` only: never a held-out file),
 *   - routing outcomes from feedback (the raw export): "answer again with X" overrides, pinned
 *     turns, and good-rated answers of one adapter,
 * then judges it on the contract's router suite against the live router (the live head, or the
 * kernel classifier when none is live), both through the app's own AdapterRouter on the base's
 * embeddings. A candidate head that routes fewer suite cases right than live, falls under the
 * suite's floor or sends more than `maxShare` of the cases to one adapter is rejected; the cycle
 * then publishes nothing new for the router (the live head stays in force).
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Contract } from "../../electron/core/contract/contract-schema";
import type { EngineClient } from "../../electron/core/engine/types";
import {
  AdapterRouter,
  LEARNED_EXAMPLE_WEIGHT,
  MemoryRouterStore,
  type RouterCandidate,
} from "../../electron/core/router";
import {
  decodeRouterArtifact,
  encodeRouterArtifact,
  routerInLineage,
  ROUTER_LINEAGE_KEY,
  trainRoutingHead,
  type HeadExample,
  type RoutingHead,
} from "../../electron/core/router/routing-head";

/** A text with the adapter that should answer it, where it came from and how much it counts. */
export interface RoutingLabel {
  label: string;
  text: string;
  source: "routingExamples" | "seeds" | "override" | "pin" | "ratedGood";
  weight: number;
}

/** Weights of the outcomes relative to a seed line (an override is the classifier's learned weight). */
export const OUTCOME_WEIGHTS = { override: LEARNED_EXAMPLE_WEIGHT, pin: 2, ratedGood: 1 } as const;
/**
 * The most of the suite's cases a head may send to one adapter before it reads as degenerate
 * (unless more of the suite's cases expect that adapter: then as many as expect it).
 */
export const ROUTER_MAX_SHARE = 0.5;

/** The router suite: the contract's cases that assert where auto routes (`routesTo`). */
export function routerSuite(contract: Contract): Array<{ id: string; text: string; expected: string }> {
  return contract.cases.flatMap((c) => {
    if (c.mode !== "auto") return [];
    const routes = c.assertions.find((a) => a.type === "routesTo");
    const text = [...c.conversation].reverse().find((m) => m.role === "user")?.content;
    return routes && routes.type === "routesTo" && text ? [{ id: c.id, text, expected: routes.adapter }] : [];
  });
}

/**
 * A text as the suite-leak check compares it: Unicode NFKC, lower-cased, punctuation and
 * symbols replaced by spaces, whitespace collapsed.
 */
export function normalizeRoutingText(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, " ")
    .replace(/\s+/gu, " ")
    .trim();
}

/** Word sets at least this similar (Jaccard) are the same prompt for the suite-leak check. */
export const SUITE_LEAK_JACCARD = 0.8;
/** A suite text of at least this many distinct words is leaked by any text containing them all. */
const SUITE_LEAK_MIN_CONTAINED_WORDS = 3;

/**
 * `texts` without those that are a suite text in a trivial variant: the same normalized text,
 * a word set at least SUITE_LEAK_JACCARD like the suite text's, or one containing every word
 * of a suite text of SUITE_LEAK_MIN_CONTAINED_WORDS words or more (the suite text with words
 * added around it: "Quick question: are you a fan of card games?" inside a longer request).
 * Shorter suite texts ("Hi there") only by the first two, or common texts would all go.
 */
export function withoutSuiteTexts<T extends { text: string }>(
  texts: readonly T[],
  suite: ReadonlyArray<{ text: string }>,
): T[] {
  const held = suite.map((c) => {
    const n = normalizeRoutingText(c.text);
    return { n, words: new Set(n.split(" ").filter(Boolean)) };
  });
  const exact = new Set(held.map((h) => h.n));
  return texts.filter((t) => {
    const n = normalizeRoutingText(t.text);
    if (exact.has(n)) return false;
    const words = new Set(n.split(" ").filter(Boolean));
    return !held.some((h) => {
      if (h.words.size === 0) return false;
      let shared = 0;
      for (const w of h.words) if (words.has(w)) shared++;
      if (shared === h.words.size && h.words.size >= SUITE_LEAK_MIN_CONTAINED_WORDS) return true;
      return shared / (h.words.size + words.size - shared) >= SUITE_LEAK_JACCARD;
    });
  });
}

/** The user prompts of `<dir>/<label>.train.jsonl` for each label that has such a file. */
export async function seedRouterTexts(dir: string, labels: readonly string[]): Promise<RoutingLabel[]> {
  const out: RoutingLabel[] = [];
  for (const label of labels) {
    const path = join(dir, `${label}.train.jsonl`);
    if (!existsSync(path)) continue;
    const lines = (await readFile(path, "utf8")).split("\n");
    for (const [i, line] of lines.entries()) {
      if (!line.trim()) continue;
      let parsed: { messages?: Array<{ role: string; content: string }> };
      try {
        parsed = JSON.parse(line) as typeof parsed;
      } catch (err) {
        throw new Error(`${path}:${i + 1}: not a JSON line (${(err as Error).message})`);
      }
      const messages = Array.isArray(parsed?.messages) ? parsed.messages : [];
      const user = messages.find((m) => m.role === "user")?.content?.trim();
      if (user) out.push({ label, text: user, source: "seeds", weight: 1 });
    }
  }
  return out;
}

interface RawItem {
  kind?: string;
  createdAt?: number;
  rating?: string | null;
  prompt?: Array<{ role: string; text: string }> | null;
  interaction?: Record<string, unknown> | null;
  versions?: { adapters?: Array<{ id: string }>; router?: { mode?: string } | null };
}

/**
 * Routing outcomes in the cloud's raw export (`/v1/export/raw/<domain>.jsonl` lines): what the
 * feedback protocol already carries, no new field. Per text the strongest signal wins (an
 * override over a pin over a good rating; the newest among equals); a text rated bad under its
 * adapter is no pin or good answer. Only `labels` (the adapters the router chooses among) are kept.
 */
export function routingOutcomes(rawLines: readonly unknown[], labels: readonly string[]): RoutingLabel[] {
  const known = new Set(labels);
  const rank = { override: 3, pin: 2, ratedGood: 1 } as const;
  const best = new Map<string, RoutingLabel & { at: number }>();
  const bad = new Set<string>();
  for (const line of rawLines) {
    const item = (line as { item?: RawItem }).item;
    if (!item || !Array.isArray(item.prompt)) continue;
    const text = [...item.prompt]
      .reverse()
      .find((t) => t.role === "user")
      ?.text?.trim();
    if (!text) continue;
    const adapters = item.versions?.adapters ?? [];
    const one = adapters.length === 1 ? adapters[0]!.id : null;
    let found: { label: string; source: "override" | "pin" | "ratedGood" } | null = null;
    if (item.kind === "router_override" && typeof item.interaction?.chosen === "string")
      found = { label: item.interaction.chosen, source: "override" };
    else if (item.kind === "rating" && item.rating === "bad" && one) bad.add(`${one}\u0000${text}`);
    else if (one && item.versions?.router?.mode === "pinned") found = { label: one, source: "pin" };
    else if (
      one &&
      item.kind === "rating" &&
      item.rating === "good" &&
      item.versions?.router?.mode === "auto"
    )
      found = { label: one, source: "ratedGood" };
    if (!found || !known.has(found.label)) continue;
    const at = item.createdAt ?? 0;
    const now = best.get(text);
    if (
      now &&
      (rank[now.source as keyof typeof rank] > rank[found.source] ||
        (now.source === found.source && now.at > at))
    )
      continue;
    best.set(text, { ...found, text, weight: OUTCOME_WEIGHTS[found.source], at });
  }
  return [...best.values()]
    .filter((l) => l.source === "override" || !bad.has(`${l.label}\u0000${l.text}`))
    .map(({ at: _at, ...l }) => l);
}

/** The raw export of each domain, as lines (the admin key's view of every install's items). */
export async function fetchRawExport(
  cloud: string,
  adminKey: string,
  domains: readonly string[],
  signal?: AbortSignal,
): Promise<unknown[]> {
  const lines: unknown[] = [];
  for (const domain of domains) {
    const res = await fetch(new URL(`/v1/export/raw/${encodeURIComponent(domain)}.jsonl`, cloud), {
      headers: { authorization: `Bearer ${adminKey}` },
      signal,
    });
    if (!res.ok)
      throw new Error(`raw export of ${domain}: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
    for (const l of (await res.text()).split("\n")) if (l.trim()) lines.push(JSON.parse(l) as unknown);
  }
  return lines;
}

export interface RouterVerdict {
  passed: boolean;
  reason: string;
  cases: number;
  candidatePassed: number;
  livePassed: number;
  /** "head v3" or "kernel classifier". */
  live: string;
  minRate: number;
  /** The adapter the candidate sends most cases to, and its share. */
  topShare: { label: string; share: number };
  perCase: Array<{ id: string; expected: string; candidate: string; live: string }>;
}

/**
 * The router gate: the candidate must route at least as many suite cases right as live, at
 * least `minRate` of them, and send to no adapter more than `maxShare` of them or, when more
 * cases expect that adapter, more than expect it.
 */
export function judgeRouter(
  suite: ReadonlyArray<{ id: string; expected: string }>,
  candidate: readonly string[],
  live: readonly string[],
  o: { minRate: number; maxShare?: number; liveName: string },
): RouterVerdict {
  const perCase = suite.map((c, i) => ({
    id: c.id,
    expected: c.expected,
    candidate: candidate[i] ?? "base",
    live: live[i] ?? "base",
  }));
  const candidatePassed = perCase.filter((c) => c.candidate === c.expected).length;
  const livePassed = perCase.filter((c) => c.live === c.expected).length;
  const counts = new Map<string, number>();
  for (const c of perCase) counts.set(c.candidate, (counts.get(c.candidate) ?? 0) + 1);
  const [label, n] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? ["none", 0];
  const topShare = { label, share: suite.length ? n / suite.length : 0 };
  const maxShare = o.maxShare ?? ROUTER_MAX_SHARE;
  // Degenerate: more cases sent to one adapter than both the share allows and the suite itself
  // expects there (an unbalanced suite, 12 coding cases of 18, is routed perfectly by sending
  // 12 to coding). Every adapter is checked, not only the most chosen one.
  const expectedOf = (l: string) => suite.filter((c) => c.expected === l).length;
  const allowed = (l: string) => Math.max(maxShare * suite.length, expectedOf(l));
  const [overLabel, overCount] = [...counts].find(([l, count]) => count > allowed(l)) ?? [null, 0];
  const degenerate = overLabel !== null;
  const rate = suite.length ? candidatePassed / suite.length : 0;
  const reason =
    suite.length === 0
      ? "the contract has no router case"
      : degenerate
        ? `degenerate: ${overCount} of ${suite.length} cases routed to ${overLabel} (at most ${Math.round(maxShare * 100)}%, or the ${expectedOf(overLabel)} that expect it)`
        : candidatePassed < livePassed
          ? `worse than live (${o.liveName}): ${candidatePassed} vs ${livePassed} of ${suite.length}`
          : rate < o.minRate
            ? `${candidatePassed} of ${suite.length} under the floor ${o.minRate}`
            : `${candidatePassed} of ${suite.length} right (live ${o.liveName}: ${livePassed})`;
  const passed = suite.length > 0 && !degenerate && candidatePassed >= livePassed && rate >= o.minRate;
  return {
    passed,
    reason,
    cases: suite.length,
    candidatePassed,
    livePassed,
    live: o.liveName,
    minRate: o.minRate,
    topShare,
    perCase,
  };
}

/** `candidates` with `encoded` as the router of `carrier` (the version the head rides in). */
export function carryingRouter(
  candidates: readonly RouterCandidate[],
  carrier: string,
  encoded: unknown,
): RouterCandidate[] {
  return candidates.map((c) => {
    const lineage = (c.lineage ?? { parent: null, trainedFrom: "" }) as { details?: Record<string, unknown> };
    const details = { ...lineage.details };
    if (c.id === carrier) details[ROUTER_LINEAGE_KEY] = encoded;
    // The live head of another version is left where it is: the newest head wins in the app too.
    return { ...c, lineage: { ...lineage, details } };
  });
}

/**
 * The parent version's router artifact, if it may ride on in the new version: only one that
 * decodes to a usable head. An unusable one (corrupt, or made for a feature extraction this
 * build does not have) is dropped with a log line and its reason: carried on, it would make
 * the app's gate refuse this version and every later one (gate-target.ts).
 */
export function parentRouterToCarry(
  encoded: unknown,
  log: (line: string) => void = () => undefined,
): { encoded: unknown; dropped: string | null } {
  if (encoded === undefined) return { encoded: undefined, dropped: null };
  try {
    decodeRouterArtifact(encoded);
    return { encoded, dropped: null };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    log(`router: the parent's router artifact is unusable and is not carried on (${reason})`);
    return { encoded: undefined, dropped: reason };
  }
}

/** The newest head the candidates carry for `baseSha256` (what the app would use), or null. */
export function liveHead(candidates: readonly RouterCandidate[], baseSha256: string): RoutingHead | null {
  let best: RoutingHead | null = null;
  for (const c of candidates) {
    const encoded = routerInLineage(c.lineage);
    if (encoded === undefined) continue;
    try {
      const head = decodeRouterArtifact(encoded);
      if (head.baseSha256 === baseSha256 && (!best || head.version > best.version)) best = head;
    } catch {
      // An unusable live artifact is no live head (the app ignores it too).
    }
  }
  return best;
}

export interface RouterStageOptions {
  base: string;
  baseSha256: string;
  /** The adapters the router chooses among, as the app will have them (live + the candidate). */
  candidates: RouterCandidate[];
  /** The adapter version that will carry the new head (the cycle's domain). */
  carrier: string;
  contract: Contract;
  makeEngine: () => EngineClient;
  /** Folder of `<domain>.train.jsonl` seed sets (their user prompts are training texts). */
  seedsDir?: string;
  /** Routing outcomes from feedback (routingOutcomes). */
  outcomes?: RoutingLabel[];
  /** Default: the contract's floor for the "router" tag, else 0. */
  minRate?: number;
  maxShare?: number;
  createdAt?: number;
  log?: (line: string) => void;
}

export interface RouterStageResult {
  head: RoutingHead;
  /** What goes into the carrier's lineage (`details.router`) when the verdict passed. */
  encoded: { gz: string };
  verdict: RouterVerdict;
  examples: Record<RoutingLabel["source"], number>;
  /** Suite texts found among the training texts and left out of training. */
  excluded: number;
  seconds: { embed: number; train: number; judge: number };
}

/**
 * Where the app's AdapterRouter sends each suite text in auto mode among `candidates` (their
 * lineages' heads for `baseSha256` included), embedded by `embed`: the first adapter's id.
 */
export async function routeSuite(
  suite: ReadonlyArray<{ text: string }>,
  candidates: readonly RouterCandidate[],
  embed: (texts: string[]) => Promise<number[][]>,
  baseSha256: string,
): Promise<string[]> {
  const router = new AdapterRouter({
    embed,
    modelKey: () => baseSha256,
    store: new MemoryRouterStore(),
    baseSha256: () => baseSha256,
  });
  const out: string[] = [];
  for (const c of suite)
    out.push(
      (await router.decide({ text: c.text, candidates, mode: { kind: "auto" } })).adapters[0]?.id ?? "base",
    );
  return out;
}

/** Trains and judges a head on `base` (an engine of its own, closed afterwards). */
export async function runRouterStage(o: RouterStageOptions): Promise<RouterStageResult> {
  const log = o.log ?? (() => undefined);
  const labels = o.candidates.map((c) => c.id);
  const suite = routerSuite(o.contract);
  const all: RoutingLabel[] = [
    ...o.candidates.flatMap((c) =>
      c.routingExamples.map((text) => ({
        label: c.id,
        text: text.trim(),
        source: "routingExamples" as const,
        weight: 1,
      })),
    ),
    ...(o.seedsDir ? await seedRouterTexts(o.seedsDir, labels) : []),
    ...(o.outcomes ?? []).filter((l) => labels.includes(l.label)),
  ].filter((l) => l.text !== "");
  // The suite judges the head: none of its prompts may be trained on, whatever the source, in
  // any trivial variant (case, punctuation, spacing, a word or two around it).
  const training = withoutSuiteTexts(all, suite);
  const excluded = all.length - training.length;
  const examples = { routingExamples: 0, seeds: 0, override: 0, pin: 0, ratedGood: 0 };
  for (const l of training) examples[l.source]++;

  const engine = o.makeEngine();
  try {
    let t = performance.now();
    await engine.load(o.base);
    const texts = [...new Set([...training.map((l) => l.text), ...suite.map((c) => c.text.trim())])];
    const vectors = new Map<string, number[]>();
    for (let i = 0; i < texts.length; i += 64) {
      const batch = texts.slice(i, i + 64);
      const out = await engine.embed(batch);
      batch.forEach((text, j) => vectors.set(text, out[j]!));
    }
    const embedSeconds = (performance.now() - t) / 1000;

    t = performance.now();
    const live = liveHead(o.candidates, o.baseSha256);
    const head = trainRoutingHead(
      training.map((l): HeadExample => ({
        label: l.label,
        text: l.text,
        embedding: vectors.get(l.text)!,
        weight: l.weight,
      })),
      {
        baseSha256: o.baseSha256,
        version: (live?.version ?? 0) + 1,
        parent: live?.version ?? null,
        sources: examples,
        createdAt: o.createdAt,
      },
    );
    const encoded = encodeRouterArtifact(head.artifact);
    const trainSeconds = (performance.now() - t) / 1000;

    // Both sides through the app's router, on the same embeddings.
    t = performance.now();
    const embed = (batch: string[]): Promise<number[][]> =>
      Promise.all(batch.map(async (text) => vectors.get(text.trim()) ?? (await engine.embed([text]))[0]!));
    const routeAll = (candidates: RouterCandidate[]) => routeSuite(suite, candidates, embed, o.baseSha256);
    const liveRoutes = await routeAll(o.candidates);
    const candidateRoutes = await routeAll(carryingRouter(o.candidates, o.carrier, encoded));
    const floor = o.minRate ?? o.contract.thresholds.byTag?.router ?? 0;
    const verdict = judgeRouter(suite, candidateRoutes, liveRoutes, {
      minRate: floor,
      maxShare: o.maxShare,
      liveName: live ? `head v${live.version}` : "kernel classifier",
    });
    const judgeSeconds = (performance.now() - t) / 1000;
    log(
      `router head v${head.version} on ${training.length} texts (${Object.entries(examples)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}): ${verdict.passed ? "passed" : "REJECTED"}, ${verdict.reason}`,
    );
    return {
      head,
      encoded,
      verdict,
      examples,
      excluded,
      seconds: { embed: embedSeconds, train: trainSeconds, judge: judgeSeconds },
    };
  } finally {
    await engine.close();
  }
}
