import { describe, expect, it } from "vitest";
import { LlamaText } from "node-llama-cpp";
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

describe("toChatHistory with tool calls", () => {
  const call = (name: string, result: unknown) => ({ name, arguments: { n: 1 }, result });

  it("puts an assistant turn's calls after its text, as function calls with their results", () => {
    expect(
      toChatHistory([
        { role: "user", text: "time?" },
        {
          role: "assistant",
          text: "Checking.",
          calls: [call("clock", "12:00"), call("zone", { tz: "UTC" })],
        },
      ]),
    ).toEqual([
      { type: "user", text: "time?" },
      {
        type: "model",
        response: [
          "Checking.",
          { type: "functionCall", name: "clock", params: { n: 1 }, result: "12:00", startsNewChunk: true },
          { type: "functionCall", name: "zone", params: { n: 1 }, result: { tz: "UTC" } },
        ],
      },
    ]);
  });

  it("merges consecutive assistant turns into one response, each turn's calls a new chunk, and continues it", () => {
    const items = toChatHistory([
      { role: "user", text: "go" },
      { role: "assistant", text: "", calls: [call("a", 1)] },
      { role: "assistant", text: "", calls: [call("b", null)] },
      { role: "assistant", text: "", calls: [{ name: "c", arguments: {}, result: undefined }] },
      { role: "assistant", text: "Done: " },
    ]);
    expect(items).toHaveLength(2);
    expect(items[1]).toEqual({
      type: "model",
      response: [
        { type: "functionCall", name: "a", params: { n: 1 }, result: 1, startsNewChunk: true },
        { type: "functionCall", name: "b", params: { n: 1 }, result: null, startsNewChunk: true },
        { type: "functionCall", name: "c", params: {}, result: "", startsNewChunk: true },
        "Done: ",
      ],
    });
  });

  it("starts a new model turn after a user turn that follows calls", () => {
    const items = toChatHistory([
      { role: "user", text: "go" },
      { role: "assistant", text: "ok", calls: [call("a", "x")] },
      { role: "user", text: "again" },
    ]);
    expect(items.map((i) => i.type)).toEqual(["user", "model", "user", "model"]);
    expect(items.at(-1)).toEqual({ type: "model", response: [] });
  });
});

describe("toChatHistory with an adapter's call format", () => {
  it("writes past calls as the adapter does, compact JSON", () => {
    const format = {
      callPrefix: '{"tool":"',
      paramsPrefix: '","arguments":',
      callSuffix: "}",
      resultPrefix: "\n",
      resultSuffix: "\n",
      documented: false,
    };
    const items = toChatHistory(
      [
        { role: "user", text: "timer" },
        {
          role: "assistant",
          text: "",
          calls: [{ name: "set_timer", arguments: { minutes: 15 }, result: "ok" }],
        },
      ],
      format,
    );
    const call = (items[1] as { response: { rawCall?: unknown }[] }).response[0]!;
    expect(LlamaText.fromJSON(call.rawCall as never).toString()).toBe(
      '{"tool":"set_timer","arguments":{"minutes":15}}',
    );
  });
});
