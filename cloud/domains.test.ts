/**
 * A team's own domain (issue: one home for each concept): the service accepts feedback about the
 * built-in domains, about any domain it was given (`--domains`), and about any domain a
 * published adapter names — so a team that publishes a "math" specialist gets its users' math
 * feedback instead of having every item refused for good.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BUILTIN_DOMAINS, domainNameProblem, parseDomainList } from "../common/domains";
import { BatchResponse } from "../common/feedback-protocol";
import { checkBatch } from "./ingest";
import { startCloud, type RunningCloud } from "./server";
import { fetchExportReport } from "./prepare/client";
import { codingManifest, publishAdapter } from "../testing/cloud/hand-built-versions";
import { makeItem, registerInstall, uploadBatch } from "../testing/cloud/items";
import { suiteDir } from "../testing/core/temp-dir";

const ADMIN = "admin-key-domains-1234";
const dir = suiteDir("macaron-cloud-domains-");
let cloud: RunningCloud | undefined;
afterEach(async () => {
  await cloud?.close();
  cloud = undefined;
});

async function send(url: string, keys: string[], domain: string) {
  const install = await registerInstall(url);
  const res = await uploadBatch(
    url,
    install,
    `batch-${keys[0]}`,
    keys.map((k) => makeItem(k, { domain })),
  );
  expect(res.status).toBe(200);
  return BatchResponse.parse(await res.json());
}

describe("domains the cloud accepts", () => {
  it("a domain an adapter was published for: refused before, accepted and exported after", async () => {
    cloud = await startCloud({ dataDir: join(dir.path, "published"), adminKey: ADMIN });
    const before = await send(cloud.url, ["math-0001"], "math");
    expect(before.rejected).toEqual([{ key: "math-0001", reason: 'unknown domain "math"' }]);

    const manifest = {
      ...codingManifest("1.0.0", "0".repeat(64), undefined, "math v1"),
      id: "math",
      domain: "math",
    };
    await publishAdapter({ url: cloud.url, adminKey: ADMIN }, manifest, Buffer.from("math adapter"));

    const after = await send(cloud.url, ["math-0002", "math-0003"], "math");
    expect(after.accepted.sort()).toEqual(["math-0002", "math-0003"]);
    const report = await fetchExportReport({ url: cloud.url, adminKey: ADMIN, domain: "math" });
    expect(report.items).toBe(2);
    // Still refused: a domain nobody published or configured.
    expect((await send(cloud.url, ["astro-001"], "astrology")).rejected).toHaveLength(1);
  });

  it("a domain the service was given, besides the built-in ones", async () => {
    cloud = await startCloud({
      dataDir: join(dir.path, "configured"),
      adminKey: ADMIN,
      domains: [...BUILTIN_DOMAINS, ...parseDomainList("math, legal-docs")],
    });
    expect((await send(cloud.url, ["legal-001"], "legal-docs")).accepted).toEqual(["legal-001"]);
    expect((await send(cloud.url, ["chat-0001"], "chat")).accepted).toEqual(["chat-0001"]);
  });

  it("--domains takes only domain names", async () => {
    expect(parseDomainList("math,,legal-docs ")).toEqual(["math", "legal-docs"]);
    expect(parseDomainList("math_v2")).toEqual(["math_v2"]);
    expect(() => parseDomainList("math,Bad Name")).toThrow(/"Bad Name" is not a domain name/);
    expect(() => parseDomainList("../x")).toThrow(/not a domain name/);
    await expect(
      startCloud({ dataDir: join(dir.path, "bad"), adminKey: ADMIN, domains: ["legal docs"] }),
    ).rejects.toThrow(/domains: "legal docs" is not a domain name/);
  });

  it("one rule for a domain's name: publish, feedback and export agree (common/domains.ts)", async () => {
    cloud = await startCloud({ dataDir: join(dir.path, "rule"), adminKey: ADMIN });
    const access = { url: cloud.url, adminKey: ADMIN };
    const publish = (domain: string) =>
      publishAdapter(
        access,
        {
          ...codingManifest("1.0.0", "0".repeat(64), undefined, `${domain} v1`),
          id: `a-${domain.length}`,
          domain,
        },
        Buffer.from(`${domain} adapter`),
      );
    // Refused at the first entry point, with the rule; and nowhere after it.
    await expect(publish("legal docs")).rejects.toThrow(
      /HTTP 400 .*invalid manifest: domain: not a domain name \(lower-case letters/,
    );
    expect((await send(cloud.url, ["legal-001"], "legal docs")).rejected).toEqual([
      { key: "legal-001", reason: domainNameProblem("legal docs") },
    ]);
    const admin = { authorization: `Bearer ${ADMIN}` };
    for (const path of [
      "/v1/export/legal%20docs.jsonl",
      "/v1/export/raw/Legal.jsonl",
      "/v1/export/.report.json",
    ]) {
      const res = await fetch(`${cloud.url}${path}`, { headers: admin });
      expect(res.status, path).toBe(404);
      expect(await res.text(), path).toMatch(/is not a domain name/);
    }

    // Taken everywhere: published, its feedback accepted, exported (raw and dataset).
    await publish("math_v2");
    expect((await send(cloud.url, ["mathv2-01"], "math_v2")).accepted).toEqual(["mathv2-01"]);
    expect((await fetchExportReport({ ...access, domain: "math_v2" })).items).toBe(1);
    const raw = await fetch(`${cloud.url}/v1/export/raw/math_v2.jsonl`, { headers: admin });
    expect(raw.status).toBe(200);
    expect((await raw.text()).trim().split("\n")).toHaveLength(1);
  });

  it("feedback about a domain that breaks the rule is refused even when the service lists it", () => {
    // An index written before the rule may still name such a domain: its items are refused
    // with the rule, not stored where no export can reach them.
    const everything = { has: () => true };
    const result = checkBatch(
      {
        protocol: 1,
        installId: randomUUID(),
        batchId: "batch-rule",
        items: [makeItem("legal-002", { domain: "legal docs" })],
      },
      everything,
    );
    expect(result).toEqual({
      ok: true,
      installId: expect.any(String) as string,
      batchId: "batch-rule",
      items: [{ ok: false, key: "legal-002", reason: domainNameProblem("legal docs") }],
    });
    expect(domainNameProblem("legal docs")).toMatch(/^"legal docs" is not a domain name \(/);
  });
});
