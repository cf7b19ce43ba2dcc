/**
 * Electron's security checklist applied to our session and window: a strict CSP, no
 * permissions, no navigation away from the app, no new windows, no <webview>, and external
 * links only after the user confirmed them.
 * https://www.electronjs.org/docs/latest/tutorial/security
 */
import { dialog, shell, type BrowserWindow, type Session, type WebContents } from "electron";
import type { AppOrigin } from "./app-origin";
import { contentSecurityPolicy } from "./content-security";
import { checkExternalUrl } from "./external-links";

/**
 * Permissions the app itself uses. Writing plain text to the clipboard backs the "copy"
 * button on code blocks; everything else (camera, geolocation, notifications...) is refused.
 */
const ALLOWED_PERMISSIONS = new Set(["clipboard-sanitized-write"]);

/** CSP header on every response and a deny-by-default permission policy for `session`. */
export function applySessionPolicy(session: Session, origin: AppOrigin): void {
  const csp = contentSecurityPolicy(origin.devServerOrigin);
  session.webRequest.onHeadersReceived((details, callback) => {
    const headers = { ...details.responseHeaders };
    // Drop any CSP the server sent (any letter case) so ours is the only one.
    for (const key of Object.keys(headers)) {
      if (key.toLowerCase() === "content-security-policy") delete headers[key];
    }
    headers["Content-Security-Policy"] = [csp];
    callback({ responseHeaders: headers });
  });
  session.setPermissionRequestHandler((contents, permission, callback, details) => {
    callback(ALLOWED_PERMISSIONS.has(permission) && origin.isAppUrl(details.requestingUrl));
  });
  session.setPermissionCheckHandler((_contents, permission, requestingOrigin, details) => {
    const url = details.requestingUrl ?? requestingOrigin;
    return ALLOWED_PERMISSIONS.has(permission) && origin.isAppUrl(url);
  });
  session.setDevicePermissionHandler(() => false);
}

/**
 * Ask the user whether to open `url` in the system browser, and open it if they agree.
 * @returns true when the link was opened.
 */
export async function confirmAndOpenExternal(window: BrowserWindow | null, url: string): Promise<boolean> {
  const checked = checkExternalUrl(url);
  if (!checked.ok) return false;
  const options = {
    type: "question" as const,
    buttons: ["Open link", "Cancel"],
    defaultId: 1,
    cancelId: 1,
    title: "Open external link",
    message: "Open this link in your browser?",
    detail: checked.url,
  };
  const { response } = window
    ? await dialog.showMessageBox(window, options)
    : await dialog.showMessageBox(options);
  if (response !== 0) return false;
  await shell.openExternal(checked.url);
  return true;
}

/**
 * Keep `contents` on the app: navigations elsewhere and window.open are refused; http(s)
 * and mailto targets are offered to the system browser after a confirmation.
 */
export function guardWebContents(
  contents: WebContents,
  origin: AppOrigin,
  getWindow: () => BrowserWindow | null,
): void {
  const offerExternally = (url: string): void => {
    if (!checkExternalUrl(url).ok) return;
    confirmAndOpenExternal(getWindow(), url).catch((error: unknown) => {
      console.error("[security] could not open external link", error);
    });
  };
  contents.on("will-navigate", (event) => {
    if (origin.isAppUrl(event.url)) return;
    event.preventDefault();
    offerExternally(event.url);
  });
  contents.on("will-redirect", (event) => {
    if (!origin.isAppUrl(event.url)) event.preventDefault();
  });
  contents.setWindowOpenHandler(({ url }) => {
    offerExternally(url);
    return { action: "deny" };
  });
  contents.on("will-attach-webview", (event) => event.preventDefault());
}
