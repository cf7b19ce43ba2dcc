import { describe, expect, it } from "vitest";
import { ApiError } from "../../../electron/api";
import type { PrivacyState, SharingLevel, SyncStatus } from "../../../electron/api";
import { PrivacyController } from "./privacy-controller";
import { configuredEndpoint } from "./privacy-logic";
import { ScriptedApi } from "../testing/scripted-api";

const sync: SyncStatus = {
  state: "disabled",
  lastSyncAt: null,
  queued: 0,
  lastError: null,
  nextAttemptAt: null,
  rejected: [],
};

function privacy(sharing: SharingLevel, over: Partial<SyncStatus> = {}): PrivacyState {
  return {
    sharing,
    installId: "install-1",
    consentedAt: null,
    endpoint: "https://fb.example",
    sync: { ...sync, ...over },
  };
}

function setup(initial: SharingLevel = "off") {
  let state = privacy(initial, { queued: 3 });
  const api = new ScriptedApi({
    "privacy.get": () => state,
    "privacy.update": ({ sharing }) => {
      const purged = sharing === "off" ? state.sync.queued : 0;
      state = privacy(sharing ?? state.sharing, { queued: sharing === "off" ? 0 : state.sync.queued });
      return { privacy: state, purged };
    },
    "privacy.preview": () => ({ items: [{ kind: "rating", text: "mail [EMAIL]" }], bytes: 42 }),
    "privacy.syncNow": () => ({ ...state.sync, state: "idle", queued: 0, lastSyncAt: 5 }),
    "privacy.deleteUploaded": () => ({ deletedItems: 7 }),
  });
  const controller = new PrivacyController(api);
  return { api, controller };
}

describe("PrivacyController", () => {
  it("asks before sharing more, and saves only after the confirmation", async () => {
    const { api, controller } = setup("off");
    controller.setOpen(true);
    await controller.load();
    expect(await controller.chooseLevel("ratings_and_text")).toBe(false);
    expect(controller.store.getState().pendingLevel).toBe("ratings_and_text");
    expect(api.inputs("privacy.update")).toEqual([]);

    controller.cancelLevel();
    expect(controller.store.getState().pendingLevel).toBeNull();

    await controller.chooseLevel("ratings");
    expect(await controller.confirmLevel()).toBe(true);
    expect(api.inputs("privacy.update")).toEqual([{ sharing: "ratings" }]);
    expect(controller.store.getState().privacy?.sharing).toBe("ratings");
    expect(controller.store.getState().pendingLevel).toBeNull();
  });

  it("turns sharing off at once and says how many queued items were deleted", async () => {
    const { controller } = setup("ratings_and_text");
    await controller.load();
    expect(await controller.chooseLevel("off")).toBe(true);
    expect(controller.store.getState().stoppedMessage).toBe("Stopped sharing — 3 queued items deleted");
    expect(controller.store.getState().privacy?.sync.queued).toBe(0);
  });

  it("shows the preview as text with its size, and refreshes it after a sync", async () => {
    const { api, controller } = setup("ratings");
    await controller.load();
    await controller.preview();
    expect(controller.store.getState().preview).toEqual({
      text: JSON.stringify([{ kind: "rating", text: "mail [EMAIL]" }], null, 2),
      bytes: 42,
      items: 1,
    });
    await controller.syncNow();
    expect(controller.store.getState().privacy?.sync).toMatchObject({ state: "idle", queued: 0 });
    expect(api.inputs("privacy.preview")).toHaveLength(2);
  });

  it("follows privacy.sync events", async () => {
    const { api, controller } = setup("ratings");
    await controller.load();
    api.emit("privacy.sync", {
      ...sync,
      state: "backoff",
      queued: 2,
      lastError: "HTTP 503",
      rejected: [{ key: "k1", kind: "rating", reason: "too large", rejectedAt: 1 }],
    });
    expect(controller.store.getState().privacy?.sync).toMatchObject({
      state: "backoff",
      queued: 2,
      lastError: "HTTP 503",
    });
    expect(controller.store.getState().privacy?.sync.rejected[0]?.reason).toBe("too large");
    controller.dispose();
    api.emit("privacy.sync", { ...sync, queued: 9 });
    expect(controller.store.getState().privacy?.sync.queued).toBe(2);
  });

  it("deletes uploaded data and reports the count, or the error", async () => {
    const { api, controller } = setup("ratings");
    controller.setConfirmingDelete(true);
    expect(await controller.deleteUploaded()).toBe(true);
    expect(controller.store.getState()).toMatchObject({
      confirmingDelete: false,
      deleteResult: "The feedback service deleted 7 uploaded items.",
    });
    api.handlers["privacy.deleteUploaded"] = () => {
      throw new ApiError("internal", "The feedback service cannot be reached.");
    };
    expect(await controller.deleteUploaded()).toBe(false);
    expect(controller.store.getState().actionError).toMatch(/cannot be reached/);
  });

  it("keeps the previous level when the update is refused", async () => {
    const { api, controller } = setup("off");
    await controller.load();
    api.handlers["privacy.update"] = () => {
      throw new ApiError("invalid_input", "The feedback endpoint must use https.");
    };
    await controller.chooseLevel("ratings");
    expect(await controller.confirmLevel()).toBe(false);
    expect(controller.store.getState().privacy?.sharing).toBe("off");
    expect(controller.store.getState().actionError).toMatch(/must use https/);
  });
});

describe("PrivacyController.setEndpoint", () => {
  it("stores the feedback service URL (trimmed) and says it was saved", async () => {
    const { api, controller } = setup("off");
    api.handlers["privacy.update"] = ({ endpoint }) => ({
      privacy: { ...privacy("off"), endpoint: endpoint ?? "" },
      purged: 0,
    });
    await controller.load();
    expect(await controller.setEndpoint("  https://feedback.example.org  ")).toBe(true);
    expect(api.inputs("privacy.update")).toEqual([{ endpoint: "https://feedback.example.org" }]);
    expect(controller.store.getState()).toMatchObject({
      endpointSaved: true,
      savingEndpoint: false,
      actionError: null,
    });
    expect(controller.store.getState().privacy?.endpoint).toBe("https://feedback.example.org");
    controller.editEndpoint();
    expect(controller.store.getState().endpointSaved).toBe(false);
  });

  it("keeps the old URL and says why when core refuses it", async () => {
    const { api, controller } = setup("off");
    await controller.load();
    api.handlers["privacy.update"] = () => {
      throw new ApiError(
        "invalid_input",
        "The feedback endpoint must use https (plain http only to localhost).",
      );
    };
    expect(await controller.setEndpoint("http://example.org")).toBe(false);
    expect(controller.store.getState().privacy?.endpoint).toBe("https://fb.example");
    expect(controller.store.getState().endpointSaved).toBe(false);
    expect(controller.store.getState().actionError).toMatch(
      /^Could not save the feedback service URL: .*https/,
    );
  });
});

describe("configuredEndpoint", () => {
  it("shows core's never-contacted .invalid placeholder as no URL, and a real one as itself", () => {
    expect(configuredEndpoint("https://feedback.macaron.invalid")).toBe("");
    expect(configuredEndpoint("not a url")).toBe("");
    expect(configuredEndpoint("https://fb.example")).toBe("https://fb.example");
    expect(configuredEndpoint("http://localhost:8080/feedback")).toBe("http://localhost:8080/feedback");
  });
});
