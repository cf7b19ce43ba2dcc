/**
 * A tool result as the model and the trajectory see it: plain text. Text content is kept as is
 * (instructions inside it stay data: nothing here acts on a result), images, audio and binary
 * resources are summarized, structured content is given as JSON, and anything over
 * TOOL_RESULT_MAX_CHARS is cut with a marker saying so.
 */
import { TOOL_RESULT_MAX_CHARS } from "../../../api/tools";
import type { ToolOutcome } from "../tool-types";

type Part = Record<string, unknown> & { type?: unknown };

/** A field of a server's result as text (servers send anything). */
function str(value: unknown, otherwise: string): string {
  return typeof value === "string" ? value : typeof value === "number" ? String(value) : otherwise;
}

/**
 * Approximate decoded size of a base64 payload; `bytes` when the transport left out a big
 * payload's data and kept only its size (shrink-message.ts).
 */
function base64Bytes(data: unknown, bytes?: unknown): number {
  if (typeof bytes === "number") return bytes;
  return typeof data === "string" ? Math.floor((data.replace(/=+$/, "").length * 3) / 4) : 0;
}

function renderPart(part: Part): string {
  switch (part.type) {
    case "text":
      return typeof part.text === "string" ? part.text : "";
    case "image":
    case "audio":
      return `[${part.type}: ${str(part.mimeType, "unknown type")}, ${base64Bytes(part.data, part.bytes)} bytes, not shown]`;
    case "resource_link":
      return `[resource link: ${str(part.name, "")} ${str(part.uri, "")}]`.replace(/ +]/, "]");
    case "resource": {
      const resource = (part.resource ?? {}) as Record<string, unknown>;
      const uri = str(resource.uri, "");
      if (typeof resource.text === "string") return `[resource ${uri}]\n${resource.text}`;
      return `[resource ${uri}: ${str(resource.mimeType, "binary")}, ${base64Bytes(resource.blob, part.bytes)} bytes, not shown]`;
    }
    default:
      return `[${str(part.type, "unknown")} content, not shown]`;
  }
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/** The result's text: its content parts, then its structured content unless a text part already is it. */
export function renderResult(result: {
  content?: unknown;
  structuredContent?: unknown;
  toolResult?: unknown;
}): string {
  const parts = Array.isArray(result.content) ? (result.content as Part[]) : [];
  const texts = parts.map(renderPart).filter((text) => text !== "");
  const structured = result.structuredContent;
  if (structured !== undefined && !texts.some((text) => sameJson(text, structured)))
    texts.push(JSON.stringify(structured));
  // Servers on the 2024-10 protocol may answer with `toolResult` instead of content.
  if (texts.length === 0 && result.toolResult !== undefined) texts.push(JSON.stringify(result.toolResult));
  return texts.join("\n");
}

/**
 * Cut `text` to TOOL_RESULT_MAX_CHARS (marker included), never inside a surrogate pair. `cut`:
 * characters the transport already removed (shrink-message.ts), for the marker's count.
 */
export function limitText(
  text: string,
  max: number = TOOL_RESULT_MAX_CHARS,
  cut = 0,
): { text: string; truncated: boolean } {
  if (text.length <= max && cut === 0) return { text, truncated: false };
  const marker = `\n[truncated: the result has ${text.length + cut} characters; only its start is shown]`;
  let end = Math.max(0, max - marker.length);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { text: text.slice(0, end) + marker, truncated: true };
}

/** A call's result as an outcome: `isError` results are errors carrying their text. */
export function outcomeOf(result: {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
  toolResult?: unknown;
  "x-macaron-cut"?: unknown;
}): ToolOutcome {
  const cut = typeof result["x-macaron-cut"] === "number" ? result["x-macaron-cut"] : 0;
  const rendered = limitText(renderResult(result), TOOL_RESULT_MAX_CHARS, cut);
  if (result.isError === true)
    return { ok: false, error: rendered.text || "The tool reported an error without a message." };
  return { ok: true, text: rendered.text, truncated: rendered.truncated };
}
