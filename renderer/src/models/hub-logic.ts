/**
 * Pure helpers for the model hub, downloads, local models and load settings: how sizes, speeds,
 * fit estimates and download states read to a person, which file a repo offers first, and the
 * load settings form's text fields <-> the contract's LoadSettings.
 */
import { ApiError } from "../../../electron/api";
import type {
  Download,
  FitEstimate,
  HubFile,
  HubRepo,
  LoadSettings,
  LocalModel,
  RecommendedModel,
} from "../../../electron/api";
import { formatBytes } from "../../../common/format-bytes";

export type GpuLayers = LoadSettings["gpuLayers"];
export type ModelTier = RecommendedModel["tier"];

const oneDecimal = new Intl.NumberFormat("en", { maximumFractionDigits: 1 });
const grouped = new Intl.NumberFormat("en");

/** "12.3 MB/s"; "—" before the first bytes arrive. */
export function formatSpeed(bytesPerSecond: number): string {
  if (!(bytesPerSecond > 0)) return "—";
  return `${formatBytes(Math.round(bytesPerSecond))}/s`;
}

/** "45 s left", "3 min left", "1 h 5 min left"; null when unknown. */
export function formatEta(seconds: number | null): string | null {
  if (seconds === null || !Number.isFinite(seconds)) return null;
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s left`;
  const minutes = Math.round(s / 60);
  if (minutes < 60) return `${minutes} min left`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m ? `${h} h ${m} min left` : `${h} h left`;
}

/** 85_000_000 -> "85M", 1_540_000_000 -> "1.5B", 700_000 -> "700K". */
export function formatParameters(n: number): string {
  if (n >= 1e12) return `${oneDecimal.format(n / 1e12)}T`;
  if (n >= 1e9) return `${oneDecimal.format(n / 1e9)}B`;
  if (n >= 1e6) return `${oneDecimal.format(n / 1e6)}M`;
  if (n >= 1e3) return `${oneDecimal.format(n / 1e3)}K`;
  return String(n);
}

/** 12345 -> "12.3k" (hub download and like counts). */
export function formatCount(n: number): string {
  if (n >= 1e6) return `${oneDecimal.format(n / 1e6)}M`;
  if (n >= 1e3) return `${oneDecimal.format(n / 1e3)}k`;
  return String(n);
}

export function formatTokens(n: number): string {
  return `${grouped.format(n)} tokens`;
}

// ---------------------------------------------------------------------------------------------
// Downloads

/** Not finished: it still takes space, time or a decision. */
export function isActiveDownload(d: Download): boolean {
  return d.state === "queued" || d.state === "downloading" || d.state === "paused" || d.state === "verifying";
}

/** 0..100, or null while the size is unknown. */
export function downloadPercent(d: Download): number | null {
  if (d.state === "done") return 100;
  if (!(d.totalBytes > 0)) return null;
  return Math.min(100, Math.floor((d.downloadedBytes / d.totalBytes) * 100));
}

/** One line under a download's progress bar. */
export function describeDownload(d: Download): string {
  const soFar = `${formatBytes(d.downloadedBytes)} of ${formatBytes(d.totalBytes)}`;
  switch (d.state) {
    case "queued":
      return "Waiting to start…";
    case "downloading": {
      const eta = formatEta(d.etaSeconds);
      return [soFar, formatSpeed(d.bytesPerSecond), eta].filter(Boolean).join(" · ");
    }
    case "paused":
      return `Paused at ${soFar}`;
    case "verifying":
      return "Checking the downloaded file against the hub's sha256…";
    case "done":
      return `Downloaded (${formatBytes(d.totalBytes)})`;
    case "cancelled":
      return "Cancelled; the partial file was deleted.";
    case "error":
      return d.error ? `Failed: ${d.error}` : "Failed.";
    case "unverified": {
      const sums = (d.unverified ?? []).map((u) => `${fileName(u.file)} sha256 ${u.sha256}`).join(", ");
      return `Downloaded (${formatBytes(d.totalBytes)}), but not checked: the hub lists no sha256 for it, so a damaged or altered file cannot be told apart. Keep it only if you trust ${d.repo}.${sums ? ` (${sums})` : ""}`;
    }
  }
}

/**
 * What a screen reader hears: state changes and every 10 % — not every progress event (they
 * come several times a second).
 */
export function downloadAnnouncement(d: Download): string {
  const name = fileName(d.file);
  const pct = downloadPercent(d);
  switch (d.state) {
    case "downloading":
      return pct === null ? `Downloading ${name}` : `Downloading ${name}: ${Math.floor(pct / 10) * 10}%`;
    case "done":
      return `${name} downloaded`;
    case "error":
      return `Download of ${name} failed${d.error ? `: ${d.error}` : ""}`;
    case "unverified":
      return `${name} downloaded but not checked: keep it or discard it`;
    default:
      return describeDownload(d);
  }
}

/** Insert or replace by id; newest first. */
export function upsertDownload(list: readonly Download[], d: Download): Download[] {
  return [...list.filter((x) => x.id !== d.id), d].sort((a, b) => b.startedAt - a.startedAt);
}

/** The newest download of this repo file that was not cancelled. */
export function downloadFor(list: readonly Download[], repo: string, file: string): Download | null {
  return list.find((d) => d.repo === repo && d.file === file && d.state !== "cancelled") ?? null;
}

/** Overall progress of the running downloads for the header: null when none runs. */
export function downloadsSummary(
  list: readonly Download[],
): { count: number; percent: number | null; label: string } | null {
  const active = list.filter(isActiveDownload);
  if (active.length === 0) return null;
  const total = active.reduce((sum, d) => sum + d.totalBytes, 0);
  const done = active.reduce((sum, d) => sum + d.downloadedBytes, 0);
  const percent = total > 0 ? Math.floor((done / total) * 100) : null;
  const paused = active.every((d) => d.state === "paused");
  const what =
    active.length === 1 ? (paused ? "Download paused" : "Downloading") : `${active.length} downloads`;
  return { count: active.length, percent, label: percent === null ? `${what}…` : `${what} ${percent}%` };
}

// ---------------------------------------------------------------------------------------------
// Hub repos and files

export function fileName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** The model files of a repo (adapters are installed from the Adapters panel), smallest first. */
export function modelFiles(repo: HubRepo): HubFile[] {
  return repo.files.filter((f) => !f.isAdapter).sort((a, b) => a.sizeBytes - b.sizeBytes);
}

/** The common choice first: the asked-for quantization, else Q4_K_M, else any 4-bit, else the smallest. */
const PREFERRED_QUANTS = ["Q4_K_M", "Q4_K_S", "Q4_0", "Q5_K_M", "Q8_0"];

export function defaultFile(files: readonly HubFile[], preferredQuant: string | null): HubFile | null {
  if (files.length === 0) return null;
  const byQuant = (q: string) => files.find((f) => f.quant?.toUpperCase() === q.toUpperCase());
  if (preferredQuant) {
    const match = byQuant(preferredQuant);
    if (match) return match;
  }
  for (const q of PREFERRED_QUANTS) {
    const match = byQuant(q);
    if (match) return match;
  }
  return files.find((f) => f.quant?.toUpperCase().startsWith("Q4")) ?? files[0]!;
}

/** The downloaded copy of a repo file, if any. */
export function localModelFor(
  locals: readonly LocalModel[] | null,
  repo: string,
  file: string,
): LocalModel | null {
  const name = fileName(file);
  return locals?.find((m) => m.fileName === name && (m.repo === null || m.repo === repo)) ?? null;
}

export const TIER_LABELS: Record<ModelTier, string> = {
  small: "Small — quick on any laptop",
  medium: "Medium — better answers, 16 GB RAM or a GPU",
  large: "Large — needs a strong GPU or lots of RAM",
  tall: "The Tall base's family — mixture-of-experts",
};

const TIER_ORDER: readonly ModelTier[] = ["small", "medium", "large", "tall"];

export function groupByTier(list: readonly RecommendedModel[]): Array<[ModelTier, RecommendedModel[]]> {
  return TIER_ORDER.map(
    (tier) => [tier, list.filter((m) => m.tier === tier)] as [ModelTier, RecommendedModel[]],
  ).filter(([, models]) => models.length > 0);
}

// ---------------------------------------------------------------------------------------------
// Errors

export type HubErrorKind = "token" | "not_found" | "rate_limited" | "network" | "other";

/** What kind of failure a hub call reports, so that the UI can offer the right next step. */
export function hubErrorKind(error: unknown): HubErrorKind {
  const message = error instanceof Error ? error.message : "";
  const code = error instanceof ApiError ? error.code : null;
  if (code === "unauthorized" || code === "forbidden" || /\b(401|403)\b|gated|access token/i.test(message))
    return "token";
  if (/\b429\b|rate.?limit|too many requests/i.test(message)) return "rate_limited";
  if (code === "not_found" || /\b404\b|not found/i.test(message)) return "not_found";
  if (
    /network|ECONNREFUSED|ENOTFOUND|ETIMEDOUT|fetch failed|cannot reach|could not reach|unreachable/i.test(
      message,
    )
  )
    return "network";
  return "other";
}

/** A next step for the user, after the server's own message. */
export function hubErrorHint(kind: HubErrorKind): string | null {
  switch (kind) {
    case "token":
      return "This repo is gated: accept its terms on huggingface.co, then add an access token below.";
    case "not_found":
      return "Check the name; the repo may have been renamed or removed.";
    case "rate_limited":
      return "The hub is limiting requests. Wait a minute and try again (an access token raises the limit).";
    case "network":
      return "Check the internet connection (or HF_ENDPOINT) and try again.";
    case "other":
      return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Fit estimate

export interface FitWords {
  verdict: string;
  /** "Needs 3.1 GB of RAM — this machine has 15.6 GB (9 GB free)". */
  ram: string;
  /** GPU use, or that it runs on the CPU. */
  gpu: string;
  context: string;
}

/** The estimate in plain words. */
export function describeFit(fit: FitEstimate): FitWords {
  const m = fit.machine;
  const ram = `Needs ${formatBytes(fit.ramBytes)} of RAM — this machine has ${formatBytes(m.ramTotalBytes)} (${formatBytes(m.ramFreeBytes)} free)`;
  let gpu: string;
  if (m.vramTotalBytes <= 0) gpu = "No GPU found: runs on the CPU.";
  else if (fit.gpuLayers === 0) gpu = `No layers on the GPU (${m.gpu ?? "GPU"}): runs on the CPU.`;
  else
    gpu = `${fit.gpuLayers} of ${fit.totalLayers} layers on the GPU (${m.gpu ?? "GPU"}): needs ${formatBytes(fit.vramBytes)} of ${formatBytes(m.vramTotalBytes)} VRAM (${formatBytes(m.vramFreeBytes)} free)`;
  const upTo =
    fit.maxContextSize > 0
      ? `up to ${grouped.format(fit.maxContextSize)} fit${fit.maxContextSize >= fit.trainContextSize ? "s" : ""} here`
      : "no context fits here";
  const context = `Context ${formatTokens(fit.contextSize)} (${upTo}; trained for ${grouped.format(fit.trainContextSize)})`;
  return {
    verdict: fit.fits ? "Fits this machine" : "Does not fit this machine",
    ram,
    gpu,
    context,
  };
}

/** Context sizes to offer: powers of two from 2,048 up to the training context (and it). */
export function contextChoices(trainContextSize: number): number[] {
  const out: number[] = [];
  for (let n = 2048; n < trainContextSize && n <= 1_048_576; n *= 2) out.push(n);
  if (trainContextSize >= 256) out.push(Math.min(trainContextSize, 1_048_576));
  return out;
}

// ---------------------------------------------------------------------------------------------
// The load settings form: text fields, because a user types them

export interface LoadDraft {
  /** "" = automatic (from the fit estimate). */
  contextSize: string;
  gpuMode: "auto" | "max" | "custom";
  gpuLayers: string;
  flashAttention: LoadSettings["flashAttention"];
  kvCacheType: LoadSettings["kvCacheType"];
  /** "" = automatic. */
  batchSize: string;
  threads: string;
}

export function draftFromSettings(s: LoadSettings): LoadDraft {
  return {
    contextSize: s.contextSize === null ? "" : String(s.contextSize),
    gpuMode: typeof s.gpuLayers === "number" ? "custom" : s.gpuLayers,
    gpuLayers: typeof s.gpuLayers === "number" ? String(s.gpuLayers) : "",
    flashAttention: s.flashAttention,
    kvCacheType: s.kvCacheType,
    batchSize: s.batchSize === null ? "" : String(s.batchSize),
    threads: s.threads === null ? "" : String(s.threads),
  };
}

export type DraftResult =
  { ok: true; settings: LoadSettings } | { ok: false; field: keyof LoadDraft; error: string };

function parseOptionalInt(
  text: string,
  field: keyof LoadDraft,
  label: string,
  min: number,
  max: number,
): { ok: true; value: number | null } | { ok: false; field: keyof LoadDraft; error: string } {
  const t = text.trim();
  if (t === "") return { ok: true, value: null };
  if (!/^\d+$/.test(t)) return { ok: false, field, error: `${label} must be a whole number.` };
  const n = Number(t);
  if (n < min || n > max)
    return {
      ok: false,
      field,
      error: `${label} must be between ${grouped.format(min)} and ${grouped.format(max)}.`,
    };
  return { ok: true, value: n };
}

/**
 * The form's fields as LoadSettings, or the first field that is wrong and why. `maxContext` is
 * the model's training context (0 = unknown), `totalLayers` its layer count (0 = unknown).
 */
export function settingsFromDraft(
  d: LoadDraft,
  limits: { maxContext: number; totalLayers: number },
): DraftResult {
  const ctxMax = limits.maxContext > 0 ? Math.min(limits.maxContext, 1_048_576) : 1_048_576;
  const ctx = parseOptionalInt(d.contextSize, "contextSize", "Context size", 256, Math.max(256, ctxMax));
  if (!ctx.ok) return ctx;
  let gpuLayers: GpuLayers = d.gpuMode === "custom" ? 0 : d.gpuMode;
  if (d.gpuMode === "custom") {
    const layersMax = limits.totalLayers > 0 ? limits.totalLayers : 1000;
    const layers = parseOptionalInt(d.gpuLayers, "gpuLayers", "GPU layers", 0, layersMax);
    if (!layers.ok) return layers;
    if (layers.value === null)
      return { ok: false, field: "gpuLayers", error: "Enter how many layers go on the GPU." };
    gpuLayers = layers.value;
  }
  const batch = parseOptionalInt(d.batchSize, "batchSize", "Batch size", 1, 65_536);
  if (!batch.ok) return batch;
  const threads = parseOptionalInt(d.threads, "threads", "Threads", 1, 512);
  if (!threads.ok) return threads;
  return {
    ok: true,
    settings: {
      contextSize: ctx.value,
      gpuLayers,
      flashAttention: d.flashAttention,
      kvCacheType: d.kvCacheType,
      batchSize: batch.value,
      threads: threads.value,
    },
  };
}

/** What models.fit / hub.fit get from the form (undefined = the server's default). */
export function fitInputFromDraft(d: LoadDraft): { contextSize?: number; gpuLayers?: GpuLayers } {
  const out: { contextSize?: number; gpuLayers?: GpuLayers } = {};
  const ctx = d.contextSize.trim();
  if (/^\d+$/.test(ctx) && Number(ctx) >= 256 && Number(ctx) <= 1_048_576) out.contextSize = Number(ctx);
  if (d.gpuMode !== "custom") out.gpuLayers = d.gpuMode;
  else if (/^\d+$/.test(d.gpuLayers.trim()) && Number(d.gpuLayers) <= 1000)
    out.gpuLayers = Number(d.gpuLayers);
  return out;
}
