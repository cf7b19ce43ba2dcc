import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { startCloud, type RunningCloud } from "../cloud/server";
import { codingManifest, publishHandBuiltVersions } from "../testing/cloud/hand-built-versions";
import { demoAdapterSpec } from "../native/gguf/adapters";
import { encodeGguf, gv } from "../native/gguf/writer";
import { AdaptersPage } from "./pages/adapters-page";
import { ChatPage } from "./pages/chat-page";
import { ReleasesPage } from "./pages/releases-page";
import { fixturesDir, ServerProcess } from "./server";

interface VersionRow {
  version: string;
  status: string;
  live: boolean;
}
interface ReleaseRow {
  id: number;
  reason: string;
  adapters: Array<{ id: string; version: string }>;
}

let server: ServerProcess | undefined;
let cloud: RunningCloud | undefined;
let scratch: string | undefined;
test.afterEach(async () => {
  await server?.stop();
  await cloud?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  server = cloud = scratch = undefined;
});

const ADAPTERS = ["chat", "coding", "agent", "ui"] as const;
const adapterFile = (id: string) => join(fixturesDir(), "adapters", `${id}.gguf`);
/** The base model's sha256, as the fixtures' manifests record it. */
const baseSha256 = () =>
  (
    JSON.parse(readFileSync(join(fixturesDir(), "adapters", "coding.json"), "utf8")) as {
      base: { baseSha256: string };
    }
  ).base.baseSha256;

/**
 * The cloud service in-process (its registry), and the app server pointed at it with the tiny
 * base and the four fixture adapters installed: their first installs are live version 1.0.0.
 */
async function start(page: Page) {
  scratch = mkdtempSync(join(tmpdir(), "macaron-releases-e2e-"));
  cloud = await startCloud({ dataDir: join(scratch, "cloud"), port: 0 });
  server = await ServerProcess.start({
    model: join(fixturesDir(), "base.gguf"),
    extraArgs: ["--max-tokens", "12"],
    // The fixture adapters answer with markers: the smoke contract is their gate.
    env: { MACARON_REGISTRY_URL: cloud.url, MACARON_CONTRACT: "smoke" },
  });
  for (const id of ADAPTERS) await server.call("adapters.install", { path: adapterFile(id) });
  const versions = await server.call<VersionRow[]>("adapters.versions", { id: "coding" });
  expect(versions.map((v) => [v.version, v.status])).toEqual([["1.0.0", "live"]]);
  const chat = new ChatPage(page);
  await chat.open(await server.loginUrl());
  const adapters = new AdaptersPage(page);
  await expect(adapters.picker.getByRole("option", { name: "Coding" })).toHaveCount(1);
  return { chat, adapters, ui: new ReleasesPage(page), server, cloud };
}

test("registry updates: the passing version goes live, the regressing one is rejected with its failing cases, rollback is instant", async ({
  page,
}) => {
  const { chat, adapters, ui, server, cloud } = await start(page);
  const trained = await publishHandBuiltVersions({
    url: cloud.url,
    adminKey: cloud.adminKey,
    baseSha256: baseSha256(),
  });
  expect(trained.published.map((e) => e.version)).toEqual(["2.0.0", "3.0.0"]);

  await ui.openSettings();
  await expect(ui.updateServer).toHaveValue(cloud.url);
  await expect(ui.settings.getByText("Never checked")).toBeVisible();
  // Automatic updates off: only the button below checks (and the switch is saved by core).
  await expect(ui.autoUpdate).toBeChecked();
  await ui.autoUpdate.click();
  await expect(ui.autoUpdate).not.toBeChecked();
  expect((await server.call<{ autoUpdate: boolean }>("updates.get", {})).autoUpdate).toBe(false);

  await ui.checkForUpdates.click();
  await expect(ui.settings.getByText("Found 2 new versions: Coding 2.0.0, Coding 3.0.0.")).toBeVisible();
  await expect(ui.updateResults.getByRole("listitem").filter({ hasText: "Coding 2.0.0" })).toContainText(
    "Passed the contract: live now",
  );
  await expect(ui.updateResults.getByRole("listitem").filter({ hasText: "Coding 3.0.0" })).toContainText(
    /Failed the contract: .*coding-pinned/,
  );
  await expect(ui.settings.getByText(/^Last checked /)).toBeVisible();
  // The promotion is a release; the rejection changed nothing live.
  const newest = ui.releaseHistory.getByRole("row").nth(1);
  await expect(newest).toContainText("Promoted");
  await expect(newest).toContainText("coding 1.0.0 → 2.0.0");
  await expect(newest).toContainText("Coding 2.0.0");
  await expect(newest).toContainText("macaron-smoke@1.0.0");
  await expect(newest).toContainText(baseSha256().slice(0, 12));
  await ui.closeSettings();

  await expect(ui.notice("Coding 2.0.0 is live")).toBeVisible();
  await expect(ui.notice(/Coding 3\.0\.0 failed the contract: .*coding-pinned/)).toBeVisible();

  // The version history: 2.0.0 live (from the registry, lineage 1.0.0), 1.0.0 retired, 3.0.0 rejected.
  await ui.openAdapters();
  await expect(adapters.fact("Coding", "Version")).toHaveText("2.0.0");
  const history = await ui.openVersions("Coding");
  const v1 = ui.version(history, "1.0.0");
  const v2 = ui.version(history, "2.0.0");
  const v3 = ui.version(history, "3.0.0");
  await expect(ui.status(v2, "Live")).toBeVisible();
  await expect(v2).toContainText("From the update server");
  await expect(v2).toContainText(`export:coding.jsonl@sha256:${trained.exportSha256}`);
  await expect(v2).toContainText(/Passed macaron-smoke 1\.0\.0/);
  await expect(ui.status(v1, "Retired")).toBeVisible();
  await expect(ui.status(v3, "Rejected")).toBeVisible();
  const failing = v3.getByRole("list", { name: "Failing cases" });
  await expect(failing.getByText("coding-pinned", { exact: true })).toBeVisible();
  await expect(failing.getByText("coding-auto", { exact: true })).toBeVisible();
  await expect(v3.getByRole("button", { name: "Run contract" })).toBeEnabled();
  await expect(v3).toContainText("Built to regress (test).");

  // Roll back: one click, instant, no gate.
  await v1.getByRole("button", { name: "Roll back to 1.0.0" }).click();
  await expect(ui.status(v1, "Live")).toBeVisible();
  await expect(ui.status(v2, "Retired")).toBeVisible();
  await expect(v2.getByRole("button", { name: "Roll back to 2.0.0" })).toBeVisible();
  await expect(adapters.fact("Coding", "Version")).toHaveText("1.0.0");
  const live = await server.call<VersionRow[]>("adapters.versions", { id: "coding" });
  expect(live.find((v) => v.live)?.version).toBe("1.0.0");
  await ui.closeAdapters();

  // A turn after the rollback is answered by coding 1.0.0, and traced to the rollback release.
  await adapters.choose("Coding");
  await chat.sendMessage("hello after the rollback");
  const answer = chat.assistantMessages().last();
  await expect(answer).toContainText("{{{");
  await expect(chat.send).toBeVisible();
  await expect(adapters.routingChip(answer)).toHaveAccessibleName("Answered by Coding (pinned)");
  await expect(adapters.routingChip(answer)).toHaveAttribute("title", /Coding v1\.0\.0/);
  const [conversation] = await server.call<Array<{ id: string }>>("conversations.list", {});
  const detail = await server.call<{ messages: Array<{ id: string; role: string }> }>("conversations.get", {
    id: conversation!.id,
  });
  const release = await server.call<ReleaseRow>("releases.forMessage", {
    messageId: detail.messages.at(-1)!.id,
  });
  expect(release.reason).toBe("rollback");
  expect(release.adapters.find((a) => a.id === "coding")?.version).toBe("1.0.0");
  // The same release under the answer: "Release details" opens it in a popover wholly in view,
  // and Escape gives focus back to the button.
  const details = answer.getByRole("button", { name: "Release details" });
  await details.click();
  const popover = page.getByRole("dialog", { name: "Release of this answer" });
  await expect(popover).toContainText(`#${release.id}: Rolled back`);
  await expect(popover).toContainText("Coding 1.0.0");
  const box = (await popover.boundingBox())!;
  const viewport = page.viewportSize()!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.y).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(viewport.width);
  expect(box.y + box.height).toBeLessThanOrEqual(viewport.height);
  await page.keyboard.press("Escape");
  await expect(popover).toBeHidden();
  await expect(details).toBeFocused();

  // Delete old versions: the kept files of 2.0.0 (retired) and 3.0.0 (rejected) go.
  await ui.openAdapters();
  const after = await ui.openVersions("Coding");
  await after.getByRole("button", { name: "Delete old versions" }).click();
  const confirm = after.getByRole("group", { name: "Delete old versions of Coding?" });
  await expect(confirm).toContainText("2 old versions");
  await confirm.getByRole("button", { name: "Yes, delete" }).click();
  await expect(after.getByText(/^Deleted 2 old version files, freed /)).toBeVisible();
  await expect(ui.version(after, "2.0.0").getByRole("button", { name: "Roll back to 2.0.0" })).toHaveCount(0);
  await expect(ui.version(after, "2.0.0")).toContainText("can no longer be rolled back to");
});

test("a new version installed from a file is staged, passes the contract and goes live", async ({ page }) => {
  const { ui, server } = await start(page);
  // Coding 1.1.0: the same behaviour under another name (so another file and sha256).
  const spec = demoAdapterSpec("coding");
  const file = join(scratch!, "coding-1.1.0.gguf");
  writeFileSync(
    file,
    encodeGguf({ ...spec, metadata: { ...spec.metadata, "general.name": gv.str("Coding 1.1.0") } }),
  );
  writeFileSync(
    join(scratch!, "coding-1.1.0.json"),
    JSON.stringify(codingManifest("1.1.0", "0".repeat(64), baseSha256(), "")),
  );

  await ui.openAdapters();
  await ui.installVersion(join(scratch!, "missing.gguf"));
  await expect(ui.adaptersPanel.getByRole("alert")).toBeVisible();

  await ui.installVersion(file);
  const history = ui.versions("Coding");
  await expect(history).toBeVisible();
  const card = ui.version(history, "1.1.0");
  await expect(card).toContainText("Installed from a file");
  await expect(ui.status(card, "Live")).toBeVisible();
  await expect(card).toContainText(/Passed macaron-smoke 1\.0\.0/);
  await expect(ui.status(ui.version(history, "1.0.0"), "Retired")).toBeVisible();
  expect(
    (await server.call<VersionRow[]>("adapters.versions", { id: "coding" })).find((v) => v.live)?.version,
  ).toBe("1.1.0");
  await ui.closeAdapters();
  await expect(ui.notice("Coding 1.1.0 is live")).toBeVisible();
});
