/**
 * Which web origins may call the model APIs cross-origin (CORS): the rules the headless
 * server's `--cors` flag (electron/server/cli.ts) and the desktop app's "Local API server"
 * setting (electron/api's CorsOrigin, the renderer's field) share, so both accept and refuse
 * the same text. The server side of CORS is electron/server/cors.ts.
 */

/** How many origins the desktop setting keeps (a list to read, not a registry). */
export const MAX_CORS_ORIGINS = 32;
/** The longest origin accepted (a host name is at most 253 characters). */
export const MAX_CORS_ORIGIN_LENGTH = 300;

/**
 * One origin as browsers send it in `Origin`: `scheme://host[:port]` with http or https, a
 * trailing slash dropped, the host lowercased and a default port left out. `*` (any origin)
 * passes here; the desktop setting refuses it (parseAllowedOrigin). Throws naming the entry.
 */
export function parseCorsOrigin(entry: string): string {
  if (entry === "*") return entry;
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw new Error(`not an origin: ${entry} (write it as http://host:port)`);
  }
  if (
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    url.pathname.replace(/\/$/, "") !== "" ||
    url.search !== "" ||
    url.hash !== "" ||
    url.username !== "" ||
    url.password !== ""
  )
    throw new Error(`not an origin: ${entry} (scheme, host and port only, e.g. http://localhost:3000)`);
  return url.origin;
}

/**
 * `--cors`'s text as origins: comma- or space-separated origins (parseCorsOrigin), or `*`.
 * Throws naming the first that is not an origin.
 */
export function parseCorsOrigins(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map(parseCorsOrigin);
}

/**
 * One entry of the desktop setting: exactly one origin (parseCorsOrigin's rules), never `*` —
 * the app lists the pages it lets in. Returns the origin as browsers send it; throws a message
 * the settings field shows as it is.
 */
export function parseAllowedOrigin(text: string): string {
  const entry = text.trim();
  if (entry === "") throw new Error("Enter an origin, e.g. http://localhost:5173.");
  if (entry.length > MAX_CORS_ORIGIN_LENGTH)
    throw new Error(`not an origin: longer than ${MAX_CORS_ORIGIN_LENGTH} characters`);
  if (entry === "*")
    throw new Error("* (any web page) is not allowed here: add each origin, e.g. http://localhost:5173.");
  if (/[\s,]/.test(entry)) throw new Error(`one origin at a time: ${entry}`);
  return parseCorsOrigin(entry);
}
