/**
 * Which links may leave the app for the system browser. Pure rules; the confirm dialog and
 * shell.openExternal live in security.ts.
 */

const EXTERNAL_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);
const MAX_URL_LENGTH = 2048;

/**
 * Parse `url` and return it normalized when it may be opened externally (http, https or
 * mailto, no credentials, reasonable length); otherwise the reason, in words for the user.
 */
export function checkExternalUrl(url: unknown): { ok: true; url: string } | { ok: false; reason: string } {
  if (typeof url !== "string" || url.length === 0) return { ok: false, reason: "The link is empty." };
  if (url.length > MAX_URL_LENGTH) return { ok: false, reason: "The link is too long to open." };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: `Not a valid link: ${url.slice(0, 200)}` };
  }
  if (!EXTERNAL_PROTOCOLS.has(parsed.protocol)) {
    return { ok: false, reason: `Only http, https and mailto links can be opened (got ${parsed.protocol}).` };
  }
  // user:password@host links are a classic way to disguise the real destination.
  if (parsed.username || parsed.password) {
    return { ok: false, reason: "Links with embedded credentials are not opened." };
  }
  return { ok: true, url: parsed.href };
}
