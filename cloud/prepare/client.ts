/**
 * The export over HTTP, for the improvement-cycle command (and tests): one call gets a split's
 * JSONL and its report, another only the report.
 */
import type { ExportQuery } from "./query";
import { ExportReport } from "./report";

export interface ExportRequest extends Partial<ExportQuery> {
  /** Base URL of the service, e.g. http://127.0.0.1:8787. */
  url: string;
  adminKey: string;
  domain: string;
}

export interface FetchedExport {
  /** The body as served (one JSON line each, newline-terminated): hash this for lineage. */
  jsonl: string;
  /** The parsed lines. */
  lines: unknown[];
  report: ExportReport;
}

/** The URL of a split's dataset (`jsonl`) or of its report. */
export function exportUrl(req: Omit<ExportRequest, "adminKey">, what: "jsonl" | "report" = "jsonl"): string {
  const url = new URL(
    `/v1/export/${encodeURIComponent(req.domain)}.${what === "jsonl" ? "jsonl" : "report.json"}`,
    req.url,
  );
  for (const name of ["type", "split", "maxTokens", "heldoutShare", "bytesPerToken"] as const) {
    const v = req[name];
    if (v !== undefined) url.searchParams.set(name, String(v));
  }
  return url.toString();
}

/** Downloads one split of a domain's dataset with its report (from the x-export-stats header). */
export async function fetchExport(req: ExportRequest, signal?: AbortSignal): Promise<FetchedExport> {
  const res = await get(exportUrl(req, "jsonl"), req.adminKey, signal);
  const jsonl = await res.text();
  const header = res.headers.get("x-export-stats");
  if (!header) throw new Error("export: the response has no x-export-stats header");
  const report = ExportReport.parse(JSON.parse(header));
  const lines = jsonl
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as unknown);
  return { jsonl, lines, report };
}

/** The report alone (counts of both splits), without building the JSONL body. */
export async function fetchExportReport(req: ExportRequest, signal?: AbortSignal): Promise<ExportReport> {
  const res = await get(exportUrl(req, "report"), req.adminKey, signal);
  return ExportReport.parse(await res.json());
}

async function get(url: string, adminKey: string, signal?: AbortSignal): Promise<Response> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${adminKey}` }, signal });
  if (!res.ok) {
    const body = await res.text();
    throw new Error(`export: HTTP ${res.status} ${body.slice(0, 300)}`);
  }
  return res;
}
