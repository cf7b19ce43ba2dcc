/** The loopback Hugging Face–shaped hub for one vitest file: started before its tests, closed after. */
import { afterAll, beforeAll } from "vitest";
import { startHubServer, type HubServer } from "./hf-hub-server";
import { suiteDir } from "../core/temp-dir";

/** Starts the hub with its default repos in a temporary folder; `onStart` receives it. */
export function useTestHub(onStart: (hub: HubServer) => void): void {
  let hub: HubServer | undefined;
  const repos = suiteDir("macaron-hub-repos-");
  beforeAll(async () => {
    hub = await startHubServer({ dir: repos.path });
    onStart(hub);
  });
  afterAll(async () => {
    await hub?.close();
  });
}
