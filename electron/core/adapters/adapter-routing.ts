import { existsSync } from "node:fs";
import { ApiError, type AdapterSelection, type AppliedAdapter, type RoutingInfo } from "../../api";
import type { AdapterUse, ToolCallFormat } from "../engine/types";
import { ToolCallFormatSchema } from "../../../common/adapter-manifest";
import type { AdapterRouter, RouterCandidate, RouterMode } from "../router";
import type { AdapterFit, AdapterRegistry } from "./adapter-registry";
import type { InstalledAdapter } from "./adapter-store";

/** A selection turned into what the engine applies and what the turn record keeps. */
export interface ResolvedAdapters {
  /** Shown under the answer (Message.routing) and stored in the turn record. */
  routing: RoutingInfo;
  /** For engine.generate: absolute paths and scales ([] = the base model alone). */
  adapters: AdapterUse[];
  /** The router's per-adapter scores (auto) or shares of the scales (pinned, blend). */
  scores: Record<string, number>;
  /** Adapters the decision chose but the turn could not use (e.g. file deleted). */
  skipped: { id: string; reason: string }[];
  /**
   * The tool-call syntax of the turn's leading adapter (highest scale), when its manifest has
   * one (GenerateOptions.toolFormat): the Agent specialist calls tools the way it was trained.
   */
  toolFormat?: ToolCallFormat;
}

export interface AdapterRoutingDeps {
  /** The installed adapters (or a view of them with a candidate version in place: the gate). */
  registry: Pick<AdapterRegistry, "withFits" | "countUsage">;
  router: AdapterRouter;
  log?: (message: string, err: unknown) => void;
  /**
   * Settles once adapters being installed right now are in the registry (the demo's four
   * specialists install after its model is ready, and the page offers its suggestions as soon as
   * the model is): a turn decides over the adapters the user was shown, never a partial set.
   */
  installed?: () => Promise<unknown>;
}

interface Usable {
  adapter: InstalledAdapter;
  fit: AdapterFit;
}

const invalid = (message: string): ApiError => new ApiError("invalid_input", message);

function baseOnly(reason: string): ResolvedAdapters {
  return {
    routing: { mode: "base", adapters: [], confidence: 1, reason, latencyMs: 0 },
    adapters: [],
    scores: {},
    skipped: [],
  };
}

function toMode(selection: Exclude<AdapterSelection, "base">): RouterMode {
  if (selection === "auto") return { kind: "auto" };
  if ("pinned" in selection) return { kind: "pinned", adapterId: selection.pinned };
  return { kind: "blend", weights: selection.blend };
}

function toCandidate(a: InstalledAdapter): RouterCandidate {
  // The user's scale is the one an adapter answers with alone.
  return {
    id: a.id,
    domain: a.domain,
    defaultScale: a.scale,
    routingExamples: a.manifest.routingExamples,
    lineage: a.manifest.lineage,
  };
}

/**
 * Turns an AdapterSelection ("auto", "base", a pin, a blend) into engine adapters and a
 * RoutingInfo, through the AdapterRouter, over the adapters that are installed, enabled and fit
 * the loaded base. Shared by chat turns and /v1.
 */
export class AdapterRouting {
  private readonly log: (message: string, err: unknown) => void;

  constructor(private readonly deps: AdapterRoutingDeps) {
    this.log = deps.log ?? console.error;
  }

  /**
   * Decide the adapters for a turn whose user text is `text`. Throws ApiError("invalid_input")
   * for a pin or blend naming an adapter that is not installed, disabled, or made for another
   * base. An adapter whose file vanished is skipped (the reason says so); the turn goes on.
   */
  async resolve(selection: AdapterSelection, text: string): Promise<ResolvedAdapters> {
    if (selection === "base") return baseOnly("base model (chosen)");
    await this.deps.installed?.().catch(() => undefined);
    const all = await this.deps.registry.withFits();
    if (selection === "auto") {
      if (all.length === 0) return baseOnly("no adapters installed");
      const candidates = all.filter((u) => u.adapter.enabled && u.fit.fits !== false);
      if (candidates.length === 0) {
        const enabled = all.filter((u) => u.adapter.enabled);
        return baseOnly(
          enabled.length === 0 ? "all adapters are disabled" : "no enabled adapter fits the loaded model",
        );
      }
      return this.decide(selection, text, candidates);
    }
    this.checkManual(selection, all);
    // A missing file does not make the choice invalid: the turn goes on without it (see below).
    const candidates = all.filter((u) => u.adapter.enabled && (u.fit.fits !== false || isMissing(u.adapter)));
    return this.decide(selection, text, candidates);
  }

  /** Check a pin or blend against the installed adapters without deciding (conversations.setAdapters). */
  async validate(selection: AdapterSelection): Promise<void> {
    if (typeof selection === "string") return;
    this.checkManual(selection, await this.deps.registry.withFits());
  }

  /**
   * The user chose `adapterId` for `text` ("answer again with Coding", a pin): teach the router.
   * The label is stored at once; the embedding follows in the background.
   */
  recordOverride(text: string, adapterId: string): void {
    if (text.trim() === "") return;
    this.deps.router
      .recordOverride({ text, chosenAdapterId: adapterId })
      .catch((err: unknown) => this.log("could not record the routing override", err));
  }

  /** One more turn answered with each of `ids` (synchronous, inside the turn's transaction). */
  countUsage(ids: readonly string[]): void {
    if (ids.length > 0) this.deps.registry.countUsage(ids);
  }

  /** Warm the router (embed routing examples) so the first auto turn does not pay for it. */
  async prepare(): Promise<void> {
    const all = await this.deps.registry.withFits();
    const candidates = all
      .filter((u) => u.adapter.enabled && u.fit.fits === true)
      .map((u) => toCandidate(u.adapter));
    if (candidates.length > 0) await this.deps.router.prepare(candidates);
  }

  private checkManual(
    selection: { pinned: string } | { blend: Record<string, number> },
    all: Usable[],
  ): void {
    const ids = "pinned" in selection ? [selection.pinned] : Object.keys(selection.blend);
    for (const id of ids) {
      const found = all.find((u) => u.adapter.id === id);
      if (!found) {
        const installed = all.map((u) => u.adapter.id).join(", ") || "none";
        throw invalid(`Adapter "${id}" is not installed (installed: ${installed}).`);
      }
      if (!found.adapter.enabled)
        throw invalid(`Adapter "${id}" is disabled. Enable it in the Adapters panel first.`);
      if (found.fit.fits === false && !isMissing(found.adapter)) {
        throw invalid(
          `Adapter "${id}" does not fit the loaded model: ${found.fit.reason ?? "unknown reason"}`,
        );
      }
    }
  }

  private async decide(
    selection: Exclude<AdapterSelection, "base">,
    text: string,
    usable: Usable[],
  ): Promise<ResolvedAdapters> {
    const decision = await this.deps.router.decide({
      text,
      candidates: usable.map((u) => toCandidate(u.adapter)),
      mode: toMode(selection),
    });
    const byId = new Map(usable.map((u) => [u.adapter.id, u.adapter]));
    const applied: AppliedAdapter[] = [];
    const adapters: AdapterUse[] = [];
    const skipped: { id: string; reason: string }[] = [];
    for (const { id, scale } of decision.adapters) {
      const adapter = byId.get(id);
      if (!adapter) continue;
      if (isMissing(adapter)) {
        skipped.push({ id, reason: `the adapter file is missing (${adapter.filePath})` });
        continue;
      }
      applied.push({ id, version: adapter.version, scale });
      adapters.push({ path: adapter.filePath, scale });
    }
    const note = skipped.map((s) => `; skipped ${s.id}: ${s.reason}`).join("");
    const toolFormat = leadingToolFormat(applied, byId);
    return {
      routing: {
        mode: decision.mode,
        adapters: applied,
        confidence: Math.min(1, Math.max(0, decision.confidence)),
        reason: decision.reason + note,
        latencyMs: decision.latencyMs,
      },
      adapters,
      scores: decision.scores,
      skipped,
      ...(toolFormat ? { toolFormat } : {}),
    };
  }
}

/**
 * The tool format of the applied adapter with the highest scale (the first of equals). A stored
 * manifest is re-checked: one written by an older version, or edited, simply has none.
 */
function leadingToolFormat(
  applied: readonly AppliedAdapter[],
  byId: ReadonlyMap<string, InstalledAdapter>,
): ToolCallFormat | undefined {
  let lead: AppliedAdapter | undefined;
  for (const a of applied) if (!lead || a.scale > lead.scale) lead = a;
  if (!lead) return undefined;
  const parsed = ToolCallFormatSchema.safeParse(byId.get(lead.id)?.manifest.toolCallFormat);
  return parsed.success ? parsed.data : undefined;
}

function isMissing(adapter: InstalledAdapter): boolean {
  return !existsSync(adapter.filePath);
}
