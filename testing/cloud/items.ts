/** Feedback items for tests and benchmarks: valid by default, any field overridable. */
import { randomUUID } from "node:crypto";
import type { FeedbackItem } from "../../common/feedback-protocol";

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

/** A registered install of the service at `url` (POST /v1/installs), as the app registers one. */
export async function registerInstall(url: string): Promise<{ installId: string; token: string }> {
  const installId = randomUUID();
  const res = await fetch(`${url}/v1/installs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ installId }),
  });
  if (!res.ok) throw new Error(`register: HTTP ${res.status} ${await res.text()}`);
  return { installId, token: ((await res.json()) as { token: string }).token };
}

/** Uploads one batch of `items` for `install` (uncompressed JSON); the caller checks the status. */
export function uploadBatch(
  url: string,
  install: { installId: string; token: string },
  batchId: string,
  items: FeedbackItem[],
): Promise<Response> {
  return fetch(`${url}/v1/feedback/batches`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${install.token}` },
    body: JSON.stringify({ protocol: 1, installId: install.installId, batchId, items }),
  });
}
