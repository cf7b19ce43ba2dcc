import { describe, expect, it } from "vitest";
import { ApiError } from "../../../electron/api";
import type { LocalServerStatus } from "../../../electron/api";
import { LocalServerController } from "./local-server-controller";
import { ScriptedApi } from "../testing/scripted-api";

function status(over: Partial<LocalServerStatus> = {}): LocalServerStatus {
  return {
    enabled: false,
    running: false,
    host: "127.0.0.1",
    port: 1234,
    url: null,
    apiKey: "k".repeat(64),
    error: null,
    ...over,
  };
}

describe("LocalServerController", () => {
  it("loads the status, configures, and follows localServer.changed events", async () => {
    let current = status();
    const api = new ScriptedApi({
      "localServer.status": () => current,
      "localServer.configure": (change) => {
        current = { ...current, ...change, running: change.enabled ?? current.enabled };
        return current;
      },
    });
    const controller = new LocalServerController(api);
    await controller.load();
    expect(controller.store.getState().status).toEqual(status());

    expect(await controller.configure({ enabled: true, port: 4000 })).toBe(true);
    expect(api.inputs("localServer.configure")).toEqual([{ enabled: true, port: 4000 }]);
    expect(controller.store.getState()).toMatchObject({ busy: false, status: { running: true, port: 4000 } });

    // The server can stop by itself (a port taken at start-up): the event is the truth.
    api.emit("localServer.changed", status({ enabled: true, error: "Port 4000 is in use" }));
    expect(controller.store.getState().status?.error).toBe("Port 4000 is in use");
    controller.dispose();
    api.emit("localServer.changed", status());
    expect(controller.store.getState().status?.enabled).toBe(true);
  });

  it("keeps the status and shows the message when a call fails", async () => {
    const api = new ScriptedApi({
      "localServer.status": () => status(),
      "localServer.regenerateKey": () => {
        throw new ApiError("busy", "The app is shutting down.");
      },
    });
    const controller = new LocalServerController(api);
    await controller.load();
    expect(await controller.regenerateKey()).toBe(false);
    expect(controller.store.getState()).toMatchObject({
      status: status(),
      error: "The app is shutting down.",
      busy: false,
    });
  });
});
