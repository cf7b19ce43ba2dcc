/** Feedback items for tests and benchmarks: valid by default, any field overridable. */
import type { FeedbackItem } from "../protocol";

export const TEST_VERSIONS: FeedbackItem["versions"] = {
  modelSha256: "ab".repeat(32),
  harnessVersion: "0.1.0+test",
  adapters: [{ id: "chat", version: "1.0.0", scale: 1 }],
  router: { mode: "auto", confidence: 0.9, reason: "test" },
  catalogVersion: null,
};

/** A rating item with text consent unless `over` says otherwise. */
export function makeItem(key: string, over: Partial<FeedbackItem> = {}): FeedbackItem {
  return {
    idempotencyKey: key,
    kind: "rating",
    createdAt: 1_700_000_000_000,
    domain: "chat",
    versions: TEST_VERSIONS,
    consent: "ratings_and_text",
    rating: "good",
    prompt: [{ role: "user", text: `question ${key}` }],
    response: `answer ${key}`,
    ...over,
  };
}
