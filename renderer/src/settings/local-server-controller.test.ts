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
    corsOrigins: [],
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

  it("adds an origin as browsers send it, explaining a bad or repeated one at the field without a call", async () => {
    let current = status({ enabled: true, running: true, corsOrigins: ["https://app.example"] });
    const api = new ScriptedApi({
      "localServer.status": () => current,
      "localServer.configure": (change) => {
        current = { ...current, corsOrigins: change.corsOrigins ?? current.corsOrigins };
        return current;
      },
    });
    const controller = new LocalServerController(api);
    await controller.load();

    expect(await controller.addCorsOrigin(" http://LOCALHOST:5173/ ")).toEqual({ saved: true, error: null });
    expect(api.inputs("localServer.configure")).toEqual([
      { corsOrigins: ["https://app.example", "http://localhost:5173"] },
    ]);
    expect(controller.store.getState().status?.corsOrigins).toEqual([
      "https://app.example",
      "http://localhost:5173",
    ]);

    for (const [text, error] of [
      ["*", /^\* \(any web page\) is not allowed here/],
      [
        "http://localhost:5173/app",
        /^Not an origin: http:\/\/localhost:5173\/app \(scheme, host and port only/,
      ],
      ["localhost:5173", /^Not an origin: localhost:5173/],
      ["", /^Enter an origin/],
      ["http://localhost:5173", /^http:\/\/localhost:5173 is already in the list\.$/],
    ] as const) {
      const added = await controller.addCorsOrigin(text);
      expect(added.saved, text).toBe(false);
      expect(added.error, text).toMatch(error);
    }
    expect(api.inputs("localServer.configure")).toHaveLength(1);

    expect(await controller.removeCorsOrigin("https://app.example")).toBe(true);
    expect(api.inputs("localServer.configure").at(-1)).toEqual({ corsOrigins: ["http://localhost:5173"] });
  });

  it("keeps the field's text when saving an origin fails, showing the call's error in the section", async () => {
    const api = new ScriptedApi({
      "localServer.status": () => status(),
      "localServer.configure": () => {
        throw new ApiError("busy", "The app is shutting down.");
      },
    });
    const controller = new LocalServerController(api);
    await controller.load();
    expect(await controller.addCorsOrigin("http://localhost:5173")).toEqual({ saved: false, error: null });
    expect(controller.store.getState()).toMatchObject({
      error: "The app is shutting down.",
      status: status(),
    });
  });
});
