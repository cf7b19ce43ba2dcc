import { describe, expect, it } from "vitest";
import { DEFAULT_FEEDBACK_ENDPOINT, resolveFeedbackEndpoint } from "./feedback-endpoint";

describe("resolveFeedbackEndpoint", () => {
  it("prefers the environment over the setting", () => {
    expect(resolveFeedbackEndpoint("https://fb.example.com/", "https://other.example.com")).toEqual({
      url: "https://fb.example.com",
      explicit: true,
      problem: null,
    });
    expect(resolveFeedbackEndpoint("  ", "https://other.example.com")).toMatchObject({
      url: "https://other.example.com",
      explicit: true,
    });
  });

  it("uses nothing when nothing is configured: the default is shown, never contacted", () => {
    const none = resolveFeedbackEndpoint(undefined, null);
    expect(none).toMatchObject({ url: DEFAULT_FEEDBACK_ENDPOINT, explicit: false });
    expect(none.problem).toMatch(/No feedback endpoint is set/);
    expect(new URL(DEFAULT_FEEDBACK_ENDPOINT).hostname.endsWith(".invalid")).toBe(true);
  });

  it("does not fall back to the setting when the environment value is unusable", () => {
    const bad = resolveFeedbackEndpoint("http://fb.example.com", "https://other.example.com");
    expect(bad).toMatchObject({ url: DEFAULT_FEEDBACK_ENDPOINT, explicit: false });
    expect(bad.problem).toBe(
      "MACARON_FEEDBACK_ENDPOINT is not usable: The feedback endpoint must use https (plain http only to localhost).",
    );
    expect(resolveFeedbackEndpoint("http://localhost:8787", null)).toMatchObject({ explicit: true });
  });
});
