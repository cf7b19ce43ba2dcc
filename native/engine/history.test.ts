import { describe, expect, it } from "vitest";
import { toChatHistory } from "./history";

describe("toChatHistory", () => {
  it("maps roles and ends with an empty model turn to complete", () => {
    expect(
      toChatHistory([
        { role: "system", text: "be brief" },
        { role: "user", text: "hi" },
        { role: "assistant", text: "hello" },
        { role: "user", text: "again" },
      ]),
    ).toEqual([
      { type: "system", text: "be brief" },
      { type: "user", text: "hi" },
      { type: "model", response: ["hello"] },
      { type: "user", text: "again" },
      { type: "model", response: [] },
    ]);
  });

  it("continues a trailing assistant turn instead of starting a new one", () => {
    expect(
      toChatHistory([
        { role: "user", text: "hi" },
        { role: "assistant", text: "Sure, " },
      ]),
    ).toEqual([
      { type: "user", text: "hi" },
      { type: "model", response: ["Sure, "] },
    ]);
  });
});
