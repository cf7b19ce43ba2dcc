/**
 * A submitted form's bubble shows the labels the user saw, and a choice's label, not the
 * fields' internal names and values (issue 30, item 5).
 */
import { describe, expect, it } from "vitest";
import type { FormField, UiDocument } from "../../../electron/api/genui/catalog";
import { formFieldsOf, labelledValues } from "./InteractionSummary";

const fields: FormField[] = [
  { kind: "text", name: "full_name", label: "Your name" },
  {
    kind: "select",
    name: "plan_tier",
    label: "Plan",
    options: [
      { value: "pro_v2", label: "Pro" },
      { value: "free", label: "Free" },
    ],
  },
  { kind: "checkbox", name: "newsletter_opt_in", label: "Send me news" },
] as FormField[];

const doc = {
  version: 1,
  blocks: [
    { kind: "text", markdown: "Sign up" },
    {
      kind: "ui",
      root: {
        type: "Card",
        id: "card",
        props: { title: "x" },
        children: [{ type: "Form", id: "signup", props: { fields } }],
      },
    },
  ],
} as unknown as UiDocument;

describe("a submitted form's bubble", () => {
  it("shows labels and option labels, from the form in the answer", () => {
    const found = formFieldsOf(doc, "signup");
    expect(found).toEqual(fields);
    expect(
      labelledValues({ full_name: "Ana", plan_tier: "pro_v2", newsletter_opt_in: true, extra: "" }, found),
    ).toEqual([
      { key: "full_name", label: "Your name", text: "Ana" },
      { key: "plan_tier", label: "Plan", text: "Pro" },
      { key: "newsletter_opt_in", label: "Send me news", text: "Yes" },
    ]);
  });

  it("keeps the names when the form is not known (the answer is not loaded)", () => {
    expect(formFieldsOf(null, "signup")).toBeNull();
    expect(labelledValues({ full_name: "Ana" }, null)).toEqual([
      { key: "full_name", label: "full_name", text: "Ana" },
    ]);
  });
});
