import { describe, expect, it } from "vitest";
import {
  formatBytes,
  previewText,
  queuedLabel,
  sharesMore,
  stoppedSharingMessage,
  syncStateLabel,
} from "./privacy-logic";

describe("privacy wording", () => {
  it("orders the sharing levels", () => {
    expect(sharesMore("off", "ratings")).toBe(true);
    expect(sharesMore("ratings", "ratings_and_text")).toBe(true);
    expect(sharesMore("ratings_and_text", "ratings")).toBe(false);
    expect(sharesMore("ratings", "off")).toBe(false);
  });

  it("counts with the right plural", () => {
    expect(stoppedSharingMessage(1)).toBe("Stopped sharing — 1 queued item deleted");
    expect(stoppedSharingMessage(0)).toBe("Stopped sharing — 0 queued items deleted");
    expect(queuedLabel(0)).toBe("0 items queued");
    expect(queuedLabel(1)).toBe("1 item queued");
  });

  it("formats sizes with the exact byte count", () => {
    expect(formatBytes(1)).toBe("1 byte");
    expect(formatBytes(900)).toBe("900 bytes");
    expect(formatBytes(2048)).toBe("2.0 KB (2048 bytes)");
    expect(formatBytes(3 * 1024 * 1024)).toBe("3.0 MB (3145728 bytes)");
  });

  it("shows markup in the preview as text, unchanged", () => {
    const text = previewText([{ response: "<img src=x onerror=alert(1)>" }]);
    expect(text).toContain("<img src=x onerror=alert(1)>");
    expect(JSON.parse(text)).toEqual([{ response: "<img src=x onerror=alert(1)>" }]);
  });
});

describe("syncStateLabel without a feedback service", () => {
  it("does not say 'Offline — will retry' when no endpoint is set", () => {
    expect(syncStateLabel("offline", "https://feedback.invalid/v1")).toBe(
      "No feedback service set — items stay queued here",
    );
    expect(syncStateLabel("backoff", "")).toBe("No feedback service set — items stay queued here");
    expect(syncStateLabel("offline", "https://feedback.example.com/v1")).toBe("Offline — will retry");
    expect(syncStateLabel("disabled", "")).toBe("Not sharing");
  });
});
