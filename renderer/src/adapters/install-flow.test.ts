import { describe, expect, it } from "vitest";
import { createStore } from "zustand/vanilla";
import { ApiError } from "../../../electron/api";
import { installFromPath, pickAndInstallWith } from "./install-flow";
import type { InstallState } from "./install-flow";

const EMPTY = "Enter a path.";

function store() {
  return createStore<InstallState>()(() => ({ installing: false, installError: null }));
}

describe("installFromPath", () => {
  it("sends the trimmed path and clears the last error", async () => {
    const s = store();
    s.setState({ installError: "old" });
    const sent: string[] = [];
    const pending = installFromPath(s, "  /a/b.gguf ", EMPTY, (path) => {
      sent.push(path);
      return Promise.resolve();
    });
    expect(s.getState()).toEqual({ installing: true, installError: null });
    expect(await pending).toBe(true);
    expect(sent).toEqual(["/a/b.gguf"]);
    expect(s.getState()).toEqual({ installing: false, installError: null });
  });

  it("asks for a path instead of sending an empty one", async () => {
    const s = store();
    let called = false;
    expect(
      await installFromPath(s, "   ", EMPTY, () => {
        called = true;
        return Promise.resolve();
      }),
    ).toBe(false);
    expect(called).toBe(false);
    expect(s.getState().installError).toBe(EMPTY);
  });

  it("shows the server's refusal and ignores a second install while one runs", async () => {
    const s = store();
    let refuse: (error: Error) => void = () => {};
    const first = installFromPath(
      s,
      "/a.gguf",
      EMPTY,
      () => new Promise<void>((_, reject) => (refuse = reject)),
    );
    expect(await installFromPath(s, "/b.gguf", EMPTY, () => Promise.resolve())).toBe(false);
    refuse(new ApiError("invalid_input", "Not a LoRA file."));
    expect(await first).toBe(false);
    expect(s.getState()).toEqual({ installing: false, installError: "Not a LoRA file." });
  });
});

describe("pickAndInstallWith", () => {
  it("installs the picked file, and does nothing without a dialog or when cancelled", async () => {
    const s = store();
    const installed: string[] = [];
    const install = (path: string) => {
      installed.push(path);
      return Promise.resolve(true);
    };
    const electron = (picked: string | null) => ({
      platform: { kind: "electron" as const, pickModelFile: () => Promise.resolve(picked) },
    });
    expect(await pickAndInstallWith({ platform: { kind: "browser" } }, s, install)).toBe(false);
    expect(await pickAndInstallWith(electron(null), s, install)).toBe(false);
    expect(await pickAndInstallWith(electron("/m/a.gguf"), s, install)).toBe(true);
    expect(installed).toEqual(["/m/a.gguf"]);
  });

  it("shows why the dialog failed", async () => {
    const s = store();
    const api = {
      platform: { kind: "electron" as const, pickModelFile: () => Promise.reject(new Error("No window")) },
    };
    expect(await pickAndInstallWith(api, s, () => Promise.resolve(true))).toBe(false);
    expect(s.getState().installError).toBe("No window");
  });
});
