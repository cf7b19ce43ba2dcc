import { describe, expect, it } from "vitest";
import type { RoutingInfo } from "../../../electron/api";
import { formatBytes } from "../../../common/format-bytes";
import {
  adapterNames,
  blendFromScales,
  describeRouting,
  describeSelection,
  initialBlendScales,
  pickerValue,
  regenerateSelection,
  selectableAdapters,
  selectionFromPicker,
} from "./adapter-logic";
import { adapterInfo as adapter } from "../testing/fixtures";

const names = adapterNames([adapter("chat", "Chat"), adapter("coding", "Coding")]);

function routing(over: Partial<RoutingInfo>): RoutingInfo {
  return { mode: "auto", adapters: [], confidence: 0.5, reason: "why", latencyMs: 2.4, ...over };
}

describe("describeRouting", () => {
  it("names the routed adapter and how sure the router was", () => {
    const d = describeRouting(
      routing({
        adapters: [{ id: "coding", version: "1.2.0", scale: 1 }],
        confidence: 0.823,
        reason: "code words",
      }),
      names,
    );
    expect(d.text).toBe("Coding · auto 82%");
    expect(d.label).toBe("Answered by Coding (auto, 82% sure)");
    expect(d.detail).toBe("code words — Coding v1.2.0 at scale 1 — Routed in 2 ms");
  });

  it("shows a pin, a blend and the base model", () => {
    expect(
      describeRouting(routing({ mode: "pinned", adapters: [{ id: "chat", version: "1", scale: 1 }] }), names),
    ).toMatchObject({ text: "Chat · pinned", label: "Answered by Chat (pinned)" });
    const blend = describeRouting(
      routing({
        mode: "blend",
        adapters: [
          { id: "chat", version: "1", scale: 0.5 },
          { id: "coding", version: "1", scale: 0.5 },
        ],
      }),
      names,
    );
    expect(blend.text).toBe("Blend: Chat 0.5 + Coding 0.5");
    expect(blend.label).toBe("Answered by a blend of Chat 0.5 and Coding 0.5");
    expect(describeRouting(routing({ mode: "base" }), names)).toMatchObject({
      text: "Base model",
      label: "Answered by the base model",
    });
    // The router itself may decide that no adapter fits.
    expect(describeRouting(routing({ confidence: 0.4 }), names).text).toBe("Base model · auto 40%");
  });

  it("falls back to the id of an adapter that is no longer installed", () => {
    const d = describeRouting(
      routing({ mode: "pinned", adapters: [{ id: "gone", version: "1", scale: 1 }] }),
      names,
    );
    expect(d.text).toBe("gone · pinned");
  });
});

describe("picker values", () => {
  it("round-trip auto, base and pins; a blend opens the editor instead", () => {
    for (const s of ["auto", "base", { pinned: "coding" }] as const) {
      expect(selectionFromPicker(pickerValue(s))).toEqual(s);
    }
    expect(pickerValue({ blend: { chat: 1 } })).toBe("blend");
    expect(selectionFromPicker("blend")).toBeNull();
    expect(selectionFromPicker("pin:")).toBeNull();
  });

  it("describe a selection in words", () => {
    expect(describeSelection("auto", names)).toBe("Auto (router)");
    expect(describeSelection({ pinned: "coding" }, names)).toBe("Coding");
    expect(describeSelection({ blend: { chat: 0.5, coding: 1.25 } }, names)).toBe(
      "Blend: Chat 0.5 + Coding 1.25",
    );
  });
});

describe("blend editor", () => {
  it("leaves zero scales out, rounds and clamps, and is the base model when all are zero", () => {
    expect(blendFromScales({ chat: 0.5, coding: 0, ui: 3 })).toEqual({ blend: { chat: 0.5, ui: 2 } });
    expect(blendFromScales({ chat: 0, coding: 0 })).toBe("base");
    expect(blendFromScales({ chat: 0.333333 })).toEqual({ blend: { chat: 0.33 } });
  });

  it("starts from the current blend or the pinned adapter's own scale", () => {
    const list = [adapter("chat", "Chat"), adapter("coding", "Coding", { scale: 0.8 })];
    expect(initialBlendScales({ blend: { chat: 0.5, gone: 1 } }, list)).toEqual({ chat: 0.5, coding: 0 });
    expect(initialBlendScales({ pinned: "coding" }, list)).toEqual({ chat: 0, coding: 0.8 });
    expect(initialBlendScales("auto", list)).toEqual({ chat: 0, coding: 0 });
  });
});

describe("regenerateSelection", () => {
  const coding = routing({ mode: "pinned", adapters: [{ id: "coding", version: "1", scale: 1 }] });
  it("lets core use the conversation's choice when that is what answered", () => {
    expect(regenerateSelection(coding, { pinned: "coding" })).toBeUndefined();
    expect(
      regenerateSelection(routing({ adapters: [{ id: "chat", version: "1", scale: 1 }] }), "auto"),
    ).toBeUndefined();
    expect(regenerateSelection(null, "auto")).toBeUndefined();
  });
  it("repeats the answer's own adapters when the conversation has changed since", () => {
    expect(regenerateSelection(coding, "auto")).toEqual({ pinned: "coding" });
    expect(regenerateSelection(routing({ mode: "base" }), { pinned: "chat" })).toBe("base");
  });
});

describe("selectableAdapters and formatBytes", () => {
  it("offers only enabled adapters that fit the loaded model", () => {
    const list = [
      adapter("a", "A"),
      adapter("b", "B", { enabled: false }),
      adapter("c", "C", { fitsLoadedModel: false }),
      adapter("d", "D", { fitsLoadedModel: null }),
    ];
    expect(selectableAdapters(list).map((a) => a.id)).toEqual(["a", "d"]);
    expect(selectableAdapters(null)).toEqual([]);
  });
  it("formats sizes", () => {
    expect(formatBytes(1760)).toBe("1.7 KB");
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(3 * 1024 * 1024 * 1024)).toBe("3 GB");
  });
});
