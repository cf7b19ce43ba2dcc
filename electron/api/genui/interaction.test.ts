import { describe, expect, it } from "vitest";
import type { UiNode } from "./catalog";
import { checkInteraction, interactionText } from "./interaction";
import { everyComponentDocument, runLogForm } from "../../../testing/samples/genui-samples";
import { findNode, validateDocument } from "./validate";

/** expect.stringContaining, typed (it returns any). */
const containing = (text: string): string => expect.stringContaining(text) as string;

const doc = (() => {
  const r = validateDocument(everyComponentDocument());
  if (!r.ok) throw new Error(r.reason);
  return r.document;
})();
const node = (id: string): UiNode => findNode(doc, id)!;

describe("checkInteraction", () => {
  const form = runLogForm();
  const good = { distance: 5.2, date: "2024-05-01", feel: "easy", notes: "windy", race: true, effort: 7 };

  it("accepts form values that fit the fields and normalises the missing ones", () => {
    expect(checkInteraction(form, "submit", good)).toEqual({
      ok: true,
      values: good,
      effect: "turn",
      label: "Log your run",
      abandoned: false,
    });
    const r = checkInteraction(form, "submit", { distance: 1, date: "2024-02-29" });
    expect(r).toMatchObject({
      ok: true,
      values: { distance: 1, date: "2024-02-29", feel: null, notes: null, race: false, effort: null },
    });
  });

  it.each([
    [{ ...good, distance: -1 }, "at least 0"],
    [{ ...good, distance: "5" }, "must be a number"],
    [{ ...good, date: "2023-02-29" }, "must be a date"],
    [{ ...good, feel: "great" }, "one of the options"],
    [{ ...good, race: "yes" }, "checked or not"],
    [{ ...good, effort: 11 }, "at most 10"],
    [{ ...good, notes: "x".repeat(501) }, "too long"],
    [{ ...good, admin: true }, 'no field "admin"'],
    [{ date: "2024-05-01" }, '"Distance (km)" is required'],
  ])("refuses %j", (values, reason) => {
    expect(checkInteraction(form, "submit", values as never)).toEqual({
      ok: false,
      reason: containing(reason),
    });
  });

  it("records an abandoned form as a signal without requiring the required fields", () => {
    expect(checkInteraction(form, "abandon", { notes: "half" })).toMatchObject({
      ok: true,
      effect: "signal",
      abandoned: true,
    });
    expect(checkInteraction(form, "delete", {})).toMatchObject({ ok: false });
  });

  it("checks buttons, choices and sorting against the component", () => {
    expect(checkInteraction(node("buttons"), "accept", {})).toMatchObject({
      ok: true,
      effect: "turn",
      label: "Accept plan",
    });
    expect(checkInteraction(node("buttons"), "launch", {})).toMatchObject({ ok: false });
    expect(checkInteraction(node("more"), "more", { x: 1 })).toMatchObject({ ok: false });
    expect(checkInteraction(node("choice"), "select", { selected: ["speed"] })).toMatchObject({
      ok: true,
      effect: "turn",
    });
    expect(checkInteraction(node("choice"), "select", { selected: ["speed", "endurance"] })).toMatchObject({
      ok: false,
    });
    expect(checkInteraction(node("choice"), "select", { selected: ["flying"] })).toMatchObject({ ok: false });
    expect(checkInteraction(node("tbl"), "sort", { column: "km", direction: "descending" })).toMatchObject({
      ok: true,
      effect: "turn",
    });
    expect(checkInteraction(node("tbl"), "sort", { column: "nope", direction: "descending" })).toMatchObject({
      ok: false,
    });
    expect(checkInteraction(node("t"), "click", {})).toMatchObject({
      ok: false,
      reason: "a Text cannot be interacted with",
    });
  });

  it("renders an interaction as one line of JSON for the model", () => {
    const text = interactionText({
      componentId: "run-form",
      componentType: "Form",
      label: "Log your run",
      action: "submit",
      values: { distance: 5 },
    });
    expect(JSON.parse(text)).toEqual({
      uiEvent: {
        component: "run-form",
        type: "Form",
        label: "Log your run",
        action: "submit",
        values: { distance: 5 },
      },
    });
  });
});
