/**
 * The dataset export in bounded memory: the same lines, in the same order, with the same report
 * as prepareExport (prepare.ts, kept as the test oracle), but nothing that grows with the store
 * is held in the JS heap. What the in-memory pipeline keeps in Maps and arrays (thumbs-down and
 * corrected answer keys, rated answers grouped by prompt, exact-duplicate hashes, surviving
 * lines, the near-duplicate index, the union-find of the split) lives in a scratch SQLite file
 * that is deleted when the export ends. Passes:
 *  0. bad-rating keys of every domain and the domain's correcting follow-ups (the filters'
 *     lookups), then
 *  1. the domain's items oldest first: candidates, filters, exact duplicates; survivors are
 *     written out and their shingles counted in a count-min sketch (fixed size); preference
 *     pairs of a prompt's rated answers come after all items, as in buildCandidates.
 *     Passes 0 and 1 read the store in one snapshot (the caller's); the rest reads scratch only.
 *  2. the greedy near-duplicate fold over the survivors in order, with prefix filtering on an
 *     on-disk index (the sketch's frequency estimate orders shingles rarest first, which only
 *     makes the prefixes selective: the fold's answer does not depend on the order);
 *  3. each kept line's side (a prompt joined to a held-out one by a fold is held out);
 * after which the report is complete and `lines(split)` streams one split from scratch.
 */
import BetterSqlite3, { type Database } from "better-sqlite3";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FeedbackItem } from "../../common/feedback-protocol";
import type { StoredItem } from "../store/store";
import {
  buildCandidates,
  groupPair,
  preferenceEntry,
  promptMessages,
  trajectoryEntry,
  similarityText,
  PAIR_GROUPS,
  type Candidate,
} from "./candidates";
import { tokenCounter } from "./length";
import { foldBounds, shingles } from "./near-duplicates";
import { userGroup } from "./groups";
import { countTrained, countTrajectory, emptyTrajectoryCounts } from "./negatives";
import { promptKey } from "./normalize";
import {
  capInstalls,
  correctedKey,
  countVerdict,
  dropReason,
  emptyQuality,
  safeJson,
  thumbsDownKey,
  type KeySet,
  resolveOptions,
  type PrepareOptions,
} from "./prepare";
import { resolveCluster, voteText } from "./quality";
import { noDrops, type ExportReport } from "./report";
import type { DomainCount } from "./source";
import { splitOf, type Split } from "./split";

/** What one streamed export reads; every call must read the same snapshot. */
export interface StreamSource {
  /** The domain's items, oldest first. */
  items(): AsyncIterable<StoredItem>;
  /** Rating items of every domain (thumbs-down lookup). */
  ratings(): AsyncIterable<StoredItem>;
  /** The domain's follow_up items (corrected-answer lookup); a superset is fine. */
  followUps(): AsyncIterable<StoredItem>;
  domains(): Promise<Record<string, DomainCount>>;
}

export interface StreamedExport {
  report: ExportReport;
  /** One split's lines (without newline) in export order; ends the export when done. */
  lines(split: Split): Generator<string>;
  /** Deletes the scratch database (idempotent; lines() does it when it finishes). */
  close(): void;
}

/** Count-min sketch of shingle frequencies: 4 rows of 2^20 counters (16 MiB, off-heap). */
const SKETCH_ROWS = 4;
const SKETCH_BITS = 20;
/** Work between yields to the event loop in the passes that read scratch only. */
const YIELD_EVERY = 512;

const SCHEMA = `
  CREATE TABLE bad (what INTEGER NOT NULL, k BLOB NOT NULL, PRIMARY KEY (what, k)) WITHOUT ROWID;
  CREATE TABLE grp (seq INTEGER PRIMARY KEY, g INTEGER NOT NULL, k BLOB NOT NULL, good INTEGER NOT NULL, json TEXT NOT NULL,
    inst TEXT NOT NULL);
  CREATE INDEX grp_key ON grp (g, k, good, seq);
  CREATE TABLE seen (h BLOB PRIMARY KEY) WITHOUT ROWID;
  CREATE TABLE surv (seq INTEGER PRIMARY KEY, json TEXT NOT NULL, sim TEXT NOT NULL, pk BLOB NOT NULL,
    held INTEGER NOT NULL, kept INTEGER NOT NULL DEFAULT 0, side INTEGER, ans TEXT NOT NULL,
    inst TEXT NOT NULL, cl INTEGER, neg INTEGER NOT NULL, lone INTEGER NOT NULL);
  CREATE INDEX surv_cl ON surv (cl, seq);
  CREATE TABLE post (s TEXT NOT NULL, doc INTEGER NOT NULL, pos INTEGER NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (s, doc)) WITHOUT ROWID;
  CREATE TABLE uf (k BLOB PRIMARY KEY, p BLOB NOT NULL, held INTEGER NOT NULL) WITHOUT ROWID;
`;

const sha = (text: string) => createHash("sha256").update(text).digest();
/** Prompt and answer keys by a 128-bit digest: fixed size on disk, collisions out of reach. */
const key16 = (text: string) => sha(text).subarray(0, 16);

/** FNV-1a over UTF-16 code units from `seed` (32 bits). */
function fnv(text: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h;
}

/** A shingle's two hashes: sketch cells and the 53-bit posting key. */
function shingleHash(s: string): { h1: number; h2: number; key: number } {
  const h1 = fnv(s, 0x811c9dc5);
  const h2 = fnv(s, 0x2f1e3c4b) | 1;
  return { h1, h2, key: h1 * 2 ** 21 + (h2 >>> 11) };
}

class Sketch {
  private readonly cells = new Uint32Array(SKETCH_ROWS << SKETCH_BITS);
  private readonly mask = (1 << SKETCH_BITS) - 1;
  add(h1: number, h2: number): void {
    for (let r = 0; r < SKETCH_ROWS; r++) this.cells[(r << SKETCH_BITS) + ((h1 + r * h2) & this.mask)]!++;
  }
  estimate(h1: number, h2: number): number {
    let min = Infinity;
    for (let r = 0; r < SKETCH_ROWS; r++)
      min = Math.min(min, this.cells[(r << SKETCH_BITS) + ((h1 + r * h2) & this.mask)]!);
    return min;
  }
}

const tick = () => new Promise<void>((r) => setImmediate(r));

/** The grp rows of users' answers that called tools (paired, or grouped by prompt). */
const TRAJECTORY_GROUP = PAIR_GROUPS.indexOf("trajectory");

/**
 * Runs passes 0–3 (the store is read only until this resolves: call it inside the snapshot)
 * and returns the report and a reader of the lines.
 */
export async function prepareExportStream(
  source: StreamSource,
  domain: string,
  opts: PrepareOptions,
  scratchDir = tmpdir(),
): Promise<StreamedExport> {
  const options = resolveOptions(opts);
  const dir = mkdtempSync(join(scratchDir, "macaron-export-"));
  const file = join(dir, "scratch.db");
  // Two connections in WAL: `r` iterates (grp, surv) while `w` writes other rows.
  const w = new BetterSqlite3(file);
  let r: Database | null = null;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    r?.close();
    w.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Scratch: nothing here must survive a crash.
    w.pragma("journal_mode = WAL");
    w.pragma("synchronous = OFF");
    w.exec(SCHEMA);
    r = new BetterSqlite3(file, { readonly: true });
    const reader = r;
    const dropped = noDrops();
    const byKind: Record<string, number> = {};
    let items = 0;
    let candidates = 0;
    const trajectories = emptyTrajectoryCounts();

    w.exec("BEGIN");
    // Pass 0: the filters' lookups.
    const addBad = w.prepare("INSERT OR IGNORE INTO bad (what, k) VALUES (?, ?)");
    for await (const row of source.ratings()) {
      const parsed = FeedbackItem.safeParse(safeJson(row.json));
      const k = parsed.success ? thumbsDownKey(parsed.data) : null;
      if (k !== null) addBad.run(0, key16(k));
    }
    for await (const row of source.followUps()) {
      const parsed = FeedbackItem.safeParse(safeJson(row.json));
      const k = parsed.success ? correctedKey(parsed.data) : null;
      if (k !== null) addBad.run(1, key16(k));
    }
    const hasBad = w.prepare("SELECT 1 FROM bad WHERE what = ? AND k = ?").pluck();
    const lookup = (what: number): KeySet => ({ has: (k) => hasBad.get(what, key16(k)) !== undefined });
    const bad = { thumbsDown: lookup(0), corrected: lookup(1) };

    // Pass 1: candidates and filters in buildCandidates' order.
    const count = tokenCounter(options.bytesPerToken);
    const addSeen = w.prepare("INSERT OR IGNORE INTO seen (h) VALUES (?)");
    const addSurv = w.prepare(
      "INSERT INTO surv (json, sim, pk, held, ans, inst, neg, lone) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const sketch = new Sketch();
    const filter = (c: Candidate, install: string) => {
      candidates++;
      if ("drop" in c) {
        dropped[c.drop]++;
        return;
      }
      const { example } = c;
      const reason = dropReason(example, bad, opts.scan, count, options.maxTokens);
      if (reason) {
        dropped[reason]++;
        return;
      }
      const json = JSON.stringify(example.line);
      if (addSeen.run(sha(json)).changes === 0) {
        dropped.duplicate++;
        return;
      }
      const sim = similarityText(example);
      const pk = promptKey(example.prompt);
      addSurv.run(
        json,
        sim,
        key16(pk),
        splitOf(pk, options.heldoutShare) === "heldout" ? 1 : 0,
        voteText(example.targets),
        install,
        example.negatives?.carried ?? 0,
        example.negatives?.unpaired ?? 0,
      );
      for (const s of shingles(sim)) {
        const { h1, h2 } = shingleHash(s);
        sketch.add(h1, h2);
      }
    };
    const addGroup = w.prepare("INSERT INTO grp (g, k, good, json, inst) VALUES (?, ?, ?, ?, ?)");
    for await (const row of source.items()) {
      // A page is hundreds of items: let requests (ingest) in between every few dozen.
      if (++items % 64 === 0) await tick();
      const parsed = FeedbackItem.safeParse(safeJson(row.json));
      const kind = parsed.success ? parsed.data.kind : "unknown";
      byKind[kind] = (byKind[kind] ?? 0) + 1;
      if (!parsed.success) {
        dropped.malformed++;
        candidates++;
        continue;
      }
      const item = parsed.data;
      countTrajectory(trajectories, item);
      if (opts.type === "sft") {
        for (const c of buildCandidates([item], "sft")) filter(c, row.installId);
        continue;
      }
      if (opts.type === "groups") {
        // Every answer that called tools waits for the rest of its prompt's group (groups.ts).
        const entry = trajectoryEntry(item);
        if (entry)
          addGroup.run(TRAJECTORY_GROUP, key16(entry.key), entry.outcome.reward, row.json, row.installId);
        continue;
      }
      const entry = preferenceEntry(item);
      if (!entry) continue;
      if ("candidate" in entry) filter(entry.candidate, row.installId);
      else
        addGroup.run(
          PAIR_GROUPS.indexOf(entry.group),
          key16(entry.key),
          entry.good ? 1 : 0,
          row.json,
          row.installId,
        );
    }
    const domains = await source.domains();
    w.exec("COMMIT");
    // Failed trajectories whose prompt has an allowed answer (preference pairs); the rest unpaired.
    // The groups export has every failed one in its prompt's group.
    if (opts.type !== "sft") {
      const withAllowed = reader
        .prepare(
          `SELECT COUNT(*) FROM grp b WHERE b.g = ? AND b.good = 0
             AND EXISTS (SELECT 1 FROM grp a WHERE a.g = b.g AND a.k = b.k AND a.good = 1)`,
        )
        .pluck()
        .get(TRAJECTORY_GROUP) as number;
      if (opts.type === "preference") trajectories.negativesInPairs = withAllowed;
      else trajectories.negativesInGroups = trajectories.failed;
      trajectories.negativesUnpaired = trajectories.failed - withAllowed;
    } else trajectories.negativesUnpaired = trajectories.failed;

    // Pairs: by group, then by each prompt's first item, good × bad in item order.
    w.exec("BEGIN");
    const pairs = reader.prepare(`
      WITH firsts AS (SELECT g, k, MIN(seq) AS f FROM grp GROUP BY g, k)
      SELECT f.g AS g, gd.json AS good, bd.json AS bad, gd.inst AS inst FROM firsts f
        JOIN grp gd ON gd.g = f.g AND gd.k = f.k AND gd.good = 1
        JOIN grp bd ON bd.g = f.g AND bd.k = f.k AND bd.good = 0
      ORDER BY f.g, f.f, gd.seq, bd.seq`);
    const parse = (json: string) => FeedbackItem.parse(JSON.parse(json));
    let n = 0;
    if (opts.type === "preference")
      for (const p of pairs.iterate() as Iterable<{ g: number; good: string; bad: string; inst: string }>) {
        filter(groupPair(PAIR_GROUPS[p.g]!, parse(p.good), parse(p.bad)), p.inst);
        if (++n % YIELD_EVERY === 0) await tick();
      }
    // Users' groups: each prompt's answers in item order, prompts by their first item (one
    // group in memory at a time), the install of its first item, as buildCandidates does.
    if (opts.type === "groups") {
      const members = reader.prepare(`
        WITH firsts AS (SELECT k, MIN(seq) AS f FROM grp WHERE g = ? GROUP BY k)
        SELECT f.f AS f, m.json AS json, m.inst AS inst FROM firsts f
          JOIN grp m ON m.g = ? AND m.k = f.k
        ORDER BY f.f, m.seq`);
      const flush = (g: { inst: string; items: FeedbackItem[] }) =>
        filter(userGroup(promptMessages(g.items[0]!)!, g.items), g.inst);
      const rows = members.iterate(TRAJECTORY_GROUP, TRAJECTORY_GROUP) as Iterable<{
        f: number;
        json: string;
        inst: string;
      }>;
      let first = -1;
      let group = { inst: "", items: [] as FeedbackItem[] };
      for (const m of rows) {
        if (m.f !== first) {
          if (group.items.length > 0) flush(group);
          first = m.f;
          group = { inst: m.inst, items: [] };
        }
        group.items.push(parse(m.json));
        if (++n % YIELD_EVERY === 0) await tick();
      }
      if (group.items.length > 0) flush(group);
    }
    w.exec("COMMIT");

    // Pass 2: the greedy fold, then each prompt cluster's majority answer.
    await fold(w, reader, sketch, options.nearDuplicateThreshold);
    const quality = emptyQuality(options.maxInstallShare!);
    await resolveClusters(w, reader, dropped, quality);

    // Pass 3: sides, then the per-install cap of each side.
    await sides(w, reader);
    const splits = capSides(w, reader, options.maxInstallShare!, quality);
    dropped.installCap = splits.capped;
    // What the train split's lines train on (negatives.ts), after every filter.
    const trained = reader
      .prepare(
        "SELECT COALESCE(SUM(neg), 0) AS neg, COALESCE(SUM(lone), 0) AS lone FROM surv WHERE kept = 1 AND side = 0",
      )
      .get() as { neg: number; lone: number };
    countTrained(trajectories, opts.type, { carried: trained.neg, unpaired: trained.lone });
    const split = opts.split ?? "train";
    const report: ExportReport = {
      type: opts.type,
      domain,
      split,
      options,
      items,
      byKind,
      candidates,
      written: splits[split],
      splits: { train: splits.train, heldout: splits.heldout },
      dropped,
      quality,
      ...(trajectories.items > 0 ? { trajectories } : {}),
      domains,
    };
    function* lines(which: Split): Generator<string> {
      try {
        const rows = reader
          .prepare("SELECT json FROM surv WHERE kept = 1 AND side = ? ORDER BY seq")
          .pluck()
          .iterate(which === "heldout" ? 1 : 0) as Iterable<string>;
        for (const json of rows) yield json;
      } finally {
        close();
      }
    }
    return { report, lines, close };
  } catch (err) {
    close();
    throw err;
  }
}

/** Marks kept survivors, unions the prompts of folded ones; returns how many were folded. */
async function fold(w: Database, r: Database, sketch: Sketch, threshold: number): Promise<number> {
  const { prefixLength, needed, sizeFits } = foldBounds(threshold);
  // A text's whole prefix in one statement each way (a JSON array of shingles): per-shingle
  // statements cost more than the lookups themselves. Postings are keyed by the shingle itself,
  // so a match is a real common shingle (the position filter below relies on that).
  // The WHERE is the position filter of a first match, with slack: it only keeps rows back
  // that could never start a similar pair (the JS loop below applies the exact filters, and
  // every candidate is verified), so a superset of the pairs comes back, never fewer; it
  // spares marshalling the long postings of common shingles late in a prefix.
  const ratio = threshold / (1 + threshold);
  const postingsOf = w.prepare(
    `SELECT j.key AS i, p.doc AS doc, p.pos AS pos, p.n AS n FROM json_each(@prefix) j
     JOIN post p ON p.s = j.value
     WHERE 1 + min(@size - j.key - 1, p.n - p.pos - 1) >= ${ratio} * (@size + p.n) - 1e-6
     ORDER BY j.key`,
  );
  const addPostings = w.prepare(
    "INSERT OR IGNORE INTO post (s, doc, pos, n) SELECT value, ?, key, ? FROM json_each(?)",
  );
  const markKept = w.prepare("UPDATE surv SET kept = 1, cl = seq WHERE seq = ?");
  const markFolded = w.prepare("UPDATE surv SET cl = ? WHERE seq = ?");
  const simOf = w.prepare("SELECT sim FROM surv WHERE seq = ?").pluck();
  const union = unionFind(w);
  let firstEmpty: number | undefined;
  let folded = 0;
  let n = 0;
  w.exec("BEGIN");
  const rows = r.prepare("SELECT seq, sim FROM surv ORDER BY seq").iterate() as Iterable<{
    seq: number;
    sim: string;
  }>;
  for (const { seq, sim } of rows) {
    if (++n % YIELD_EVERY === 0) await tick();
    const set = shingles(sim);
    const into: number[] = [];
    // Rarest first by the sketch, ties by hash then text: one total order for every text.
    const ordered = [...set]
      .map((s) => {
        const h = shingleHash(s);
        return { s, key: h.key, f: sketch.estimate(h.h1, h.h2) };
      })
      .sort((a, b) => a.f - b.f || a.key - b.key || (a.s < b.s ? -1 : a.s > b.s ? 1 : 0));
    const prefix = set.size === 0 ? 0 : prefixLength(set.size);
    // Built once: the lookup below and the postings of a kept text take the same prefix.
    const prefixText = JSON.stringify(ordered.slice(0, prefix).map((o) => o.s));
    if (set.size === 0) {
      // Empty texts are all one text: every one after the first is folded into it.
      if (firstEmpty === undefined) firstEmpty = seq;
      else into.push(firstEmpty);
    } else {
      // The in-memory fold's size and position filters (PPJoin), in the same order.
      const overlap = new Map<number, number>();
      for (const p of postingsOf.all({ prefix: prefixText, size: set.size }) as {
        i: number;
        doc: number;
        pos: number;
        n: number;
      }[]) {
        if (!sizeFits(set.size, p.n)) continue;
        const found = overlap.get(p.doc) ?? 0;
        if (found < 0) continue;
        const bound = found + 1 + Math.min(set.size - p.i - 1, p.n - p.pos - 1);
        overlap.set(p.doc, bound >= needed(set.size, p.n) ? found + 1 : -1);
      }
      const candidates = [...overlap]
        .filter(([, found]) => found > 0)
        .map(([doc]) => doc)
        .sort((a, b) => a - b);
      for (const doc of candidates) {
        // Verified on the texts themselves.
        const other = shingles(simOf.get(doc) as string);
        let common = 0;
        for (const s of other) if (set.has(s)) common++;
        if (common >= needed(set.size, other.size)) into.push(doc);
      }
    }
    if (into.length > 0) {
      folded++;
      // Its prompt cluster: the first kept text it is similar to (the in-memory fold's into[0]).
      markFolded.run(Math.min(...into), seq);
      for (const doc of into) union(seq, doc);
      continue;
    }
    markKept.run(seq);
    if (prefix > 0) addPostings.run(seq, set.size, prefixText);
  }
  w.exec("COMMIT");
  return folded;
}

/**
 * Union-find over the prompt keys of survivors (on disk): `held` of a root says whether any
 * prompt of its component hashes held out.
 */
function unionFind(w: Database) {
  const docKey = w.prepare("SELECT pk, held FROM surv WHERE seq = ?");
  const add = w.prepare("INSERT OR IGNORE INTO uf (k, p, held) VALUES (?, ?, ?)");
  const get = w.prepare("SELECT p, held FROM uf WHERE k = ?");
  const setParent = w.prepare("UPDATE uf SET p = ? WHERE k = ?");
  const orHeld = w.prepare("UPDATE uf SET held = MAX(held, ?) WHERE k = ?");
  const find = (k: Buffer): { root: Buffer; held: number } => {
    const path: Buffer[] = [];
    let at = k;
    for (;;) {
      const row = get.get(at) as { p: Buffer; held: number };
      if (row.p.equals(at)) {
        for (const q of path) setParent.run(at, q);
        return { root: at, held: row.held };
      }
      path.push(at);
      at = row.p;
    }
  };
  return (a: number, b: number) => {
    const ka = docKey.get(a) as { pk: Buffer; held: number };
    const kb = docKey.get(b) as { pk: Buffer; held: number };
    add.run(ka.pk, ka.pk, ka.held);
    add.run(kb.pk, kb.pk, kb.held);
    const ra = find(ka.pk);
    const rb = find(kb.pk);
    if (ra.root.equals(rb.root)) return;
    setParent.run(rb.root, ra.root);
    orHeld.run(ra.held, rb.root);
  };
}

/**
 * Each prompt cluster of more than one line keeps its majority answer's first line (quality.ts
 * resolveCluster): `kept` moves to it, or is cleared on a tie. Only clusters' members are read.
 */
async function resolveClusters(
  w: Database,
  r: Database,
  dropped: ExportReport["dropped"],
  quality: ReturnType<typeof emptyQuality>,
): Promise<void> {
  const members = w.prepare("SELECT seq, ans, inst FROM surv WHERE cl = ? ORDER BY seq");
  const setKept = w.prepare("UPDATE surv SET kept = ? WHERE seq = ?");
  let n = 0;
  w.exec("BEGIN");
  const clusters = r
    .prepare("SELECT cl FROM surv WHERE cl IS NOT NULL GROUP BY cl HAVING COUNT(*) > 1 ORDER BY cl")
    .pluck()
    .iterate() as Iterable<number>;
  for (const cl of clusters) {
    if (++n % YIELD_EVERY === 0) await tick();
    const rows = members.all(cl) as { seq: number; ans: string; inst: string }[];
    const verdict = resolveCluster(rows.map((m) => ({ seq: m.seq, answer: m.ans, install: m.inst })));
    countVerdict(verdict, dropped, quality);
    if (verdict.keep === cl) continue;
    setKept.run(0, cl);
    if (verdict.keep !== null) setKept.run(1, verdict.keep);
  }
  w.exec("COMMIT");
}

/**
 * Drops each side's lines over the per-install cap (capInstalls, an install's first lines kept);
 * returns the lines left per split and how many were dropped. The installs' counts are small
 * (one per install); the lines' installs are read side by side.
 */
function capSides(
  w: Database,
  r: Database,
  share: number,
  quality: ReturnType<typeof emptyQuality>,
): Record<Split, number> & { capped: number } {
  const out = { train: 0, heldout: 0, capped: 0 };
  const unkeep = w.prepare("UPDATE surv SET kept = 0 WHERE seq = ?");
  w.exec("BEGIN");
  for (const side of ["train", "heldout"] as const) {
    const rows = r
      .prepare("SELECT seq, inst FROM surv WHERE kept = 1 AND side = ? ORDER BY seq")
      .all(side === "heldout" ? 1 : 0) as { seq: number; inst: string }[];
    const keep = capInstalls(
      rows.map((x) => x.inst),
      share,
      quality.installCap[side],
    );
    const keepSet = new Set(keep);
    rows.forEach((x, j) => {
      if (!keepSet.has(j)) unkeep.run(x.seq);
    });
    out[side] = keep.length;
    out.capped += rows.length - keep.length;
  }
  w.exec("COMMIT");
  return out;
}

/** Writes each kept line's side; returns the count per split. */
async function sides(w: Database, r: Database): Promise<Record<Split, number>> {
  const get = w.prepare("SELECT p, held FROM uf WHERE k = ?");
  const setSide = w.prepare("UPDATE surv SET side = ? WHERE seq = ?");
  const rootHeld = (k: Buffer): number | undefined => {
    let row = get.get(k) as { p: Buffer; held: number } | undefined;
    if (!row) return undefined;
    let at = k;
    while (!row.p.equals(at)) {
      at = row.p;
      row = get.get(at) as { p: Buffer; held: number };
    }
    return row.held;
  };
  const out: Record<Split, number> = { train: 0, heldout: 0 };
  let n = 0;
  w.exec("BEGIN");
  const rows = r.prepare("SELECT seq, pk, held FROM surv WHERE kept = 1 ORDER BY seq").iterate() as Iterable<{
    seq: number;
    pk: Buffer;
    held: number;
  }>;
  for (const row of rows) {
    if (++n % YIELD_EVERY === 0) await tick();
    const side = rootHeld(row.pk) ?? row.held;
    setSide.run(side, row.seq);
    out[side === 1 ? "heldout" : "train"]++;
  }
  w.exec("COMMIT");
  return out;
}
