/**
 * Cuts what a server sends down to what the app can use, before the message is validated and
 * kept: a tool result's text, resources and binaries to `maxChars` each (the model sees at most
 * TOOL_RESULT_MAX_CHARS anyway), and any other string to `maxString`. How many characters were
 * cut is recorded on the result (`x-macaron-cut`) so that the marker can say the real size.
 *
 * Self-contained on purpose (no imports, no helpers outside it, plain JavaScript in effect):
 * message-worker.ts runs its source text in a worker thread for big messages.
 */
export function shrinkMessage(message: unknown, maxChars: number, maxString: number): unknown {
  if (typeof message !== "object" || message === null) return message;
  let cut = 0;
  const shorten = (text: string, max: number): string => {
    if (text.length <= max) return text;
    cut += text.length - max;
    return text.slice(0, max);
  };
  const result = (message as { result?: unknown }).result;
  if (typeof result === "object" && result !== null && !Array.isArray(result)) {
    const r = result as Record<string, unknown>;
    if (Array.isArray(r.content))
      for (const part of r.content as unknown[]) {
        if (typeof part !== "object" || part === null) continue;
        const p = part as Record<string, unknown>;
        if (typeof p.text === "string") p.text = shorten(p.text, maxChars);
        for (const key of ["data", "blob"])
          if (typeof p[key] === "string" && p[key].length > maxChars) {
            // Binaries are summarized by size only (mcp-result.ts): keep the size, not the bytes.
            p.bytes = Math.floor((p[key].replace(/=+$/, "").length * 3) / 4);
            p[key] = "";
          }
        const resource = p.resource as Record<string, unknown> | undefined;
        if (typeof resource === "object" && resource !== null) {
          if (typeof resource.text === "string") resource.text = shorten(resource.text, maxChars);
          if (typeof resource.blob === "string" && resource.blob.length > maxChars) {
            p.bytes = Math.floor((resource.blob.replace(/=+$/, "").length * 3) / 4);
            resource.blob = "";
          }
        }
      }
    for (const key of ["structuredContent", "toolResult"]) {
      if (r[key] === undefined) continue;
      let json: string | undefined;
      try {
        json = JSON.stringify(r[key]);
      } catch {
        json = undefined;
      }
      if (json !== undefined && json.length <= maxChars) continue;
      // Too big to show as JSON: its start, as text, in place of the value.
      const text = json === undefined ? "[a value that cannot be shown as JSON]" : shorten(json, maxChars);
      delete r[key];
      if (!Array.isArray(r.content)) r.content = [];
      (r.content as unknown[]).push({ type: "text", text });
    }
  }
  // Any other string (a description, a log message's data): bounded too. Iterative: the value
  // may be nested thousands of levels deep.
  const stack: unknown[] = [message];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== "object" || value === null) continue;
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const item = record[key];
      if (typeof item === "string") {
        if (item.length > maxString) record[key] = shorten(item, maxString);
      } else if (typeof item === "object" && item !== null) stack.push(item);
    }
  }
  if (cut > 0 && typeof result === "object" && result !== null && !Array.isArray(result))
    (result as Record<string, unknown>)["x-macaron-cut"] = cut;
  return message;
}
