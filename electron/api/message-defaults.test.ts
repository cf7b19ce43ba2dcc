import { describe, expect, it } from "vitest";
import { messageDefaults } from "./message-defaults";
import { Message } from "./schemas";

describe("messageDefaults", () => {
  it("are the Message schema's defaults, fresh each call", () => {
    const required = { id: "m1", conversationId: "c1", role: "user", content: "hi", status: "complete" };
    const parsed = Message.parse({ ...required, error: null, createdAt: 0, stats: null });
    expect({ ...required, error: null, createdAt: 0, stats: null, ...messageDefaults() }).toEqual(parsed);
    expect(messageDefaults()).toMatchObject({ routing: null, corrected: false, memoriesUsed: [], steps: [] });
    expect(messageDefaults().steps).not.toBe(messageDefaults().steps);
  });
});
