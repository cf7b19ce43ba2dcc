/** The loopback Hugging Face–shaped hub for one vitest file: started before its tests, closed after. */
import { afterAll, beforeAll } from "vitest";
import { startHubServer, type HubServer } from "./hf-hub-server";
import { tempDir } from "../core/temp-dir";

/** Starts the hub with its default repos in a temporary folder; `onStart` receives it. */
export function useTestHub(onStart: (hub: HubServer) => void): void {
  let hub: HubServer | undefined;
  let repos: ReturnType<typeof tempDir> | undefined;
  beforeAll(async () => {
    repos = tempDir("macaron-hub-repos-");
    hub = await startHubServer({ dir: repos.path });
    onStart(hub);
  });
  afterAll(async () => {
    await hub?.close();
    repos?.remove();
  });
}
