import { describe, expect, it } from "vitest";
import { messageDefaults } from "./message-defaults";

describe("messageDefaults", () => {
  it("are the Message schema's defaults, fresh each call", () => {
    expect(messageDefaults()).toEqual({
      routing: null,
      rating: null,
      corrected: false,
      memoriesUsed: [],
      context: null,
      steps: [],
    });
    expect(messageDefaults().steps).not.toBe(messageDefaults().steps);
  });
});
