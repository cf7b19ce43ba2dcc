/**
 * The Content-Security-Policy the window runs under. Pure, so the exact header is tested.
 */

/** Production policy: only our own files, no inline scripts, no remote content. */
export const PRODUCTION_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * The policy for a URL. Under the Vite dev server, hot reload needs the React refresh inline
 * preamble and a WebSocket back to the dev server, so script-src and connect-src are widened
 * there, and only there.
 */
export function contentSecurityPolicy(devServerOrigin: string | null): string {
  if (!devServerOrigin) return PRODUCTION_CSP;
  const ws = devServerOrigin.replace(/^http/, "ws");
  return PRODUCTION_CSP.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'").replace(
    "connect-src 'self'",
    `connect-src 'self' ${devServerOrigin} ${ws}`,
  );
}
