/**
 * The IPC channel names shared by the preload (renderer side) and electron/main (main side).
 * Kept here, with no imports, because the sandboxed preload may import only `electron`,
 * electron/api and common/; main imports this file too, so the two sides cannot drift apart.
 */
export const IpcChannel = {
  /** (method, input) → Result envelope. */
  invoke: "macaron:invoke",
  /** () → absolute path of a .gguf file, or null when cancelled. */
  pickModel: "macaron:pick-model",
  /** (url) → void, after the user confirmed. */
  openExternal: "macaron:open-external",
  /** main → renderer: (eventName, payload). */
  event: "macaron:event",
} as const;
