/**
 * The headless server on loopback with the real engine and the trained demo loaded (its base and
 * adapters), for the /v1 engine tests that drive it with official clients. One per test file.
 */
import { join } from "node:path";
import { startServer, type RunningServer } from "../../electron/server/start";
import { spawnTestEngine } from "../engine/real-engine";
import { tempDir } from "../core/temp-dir";

export interface DemoServer {
  server: RunningServer;
  /** The base model's id on /v1 (its file name), as GET /v1/models lists it first. */
  base: string;
  /** Stops the server (and its engine) and deletes its data folder. */
  close(): Promise<void>;
}

export async function startDemoServer(name: string): Promise<DemoServer> {
  const dir = tempDir(`macaron-${name}-`);
  const server = await startServer({
    dataDir: join(dir.path, "data"),
    rendererDir: join(dir.path, "no-ui"),
    spawnEngine: spawnTestEngine(),
  });
  const close = async (): Promise<void> => {
    await server.close();
    dir.remove();
  };
  try {
    const opened = await server.core.dispatch("models.openDemo", {}, { transport: "http" });
    if (!opened.ok) throw new Error(opened.error.message);
    const response = await fetch(`${server.url}/v1/models`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    const models = (await response.json()) as { data: { id: string }[] };
    return { server, base: models.data[0]!.id, close };
  } catch (error) {
    await close();
    throw error;
  }
}
