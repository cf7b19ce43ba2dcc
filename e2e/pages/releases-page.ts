import { expect, type Locator, type Page } from "@playwright/test";

/**
 * Adapter versions, updates and releases as a user sees them: the version history in the
 * Adapters panel, "Adapter updates" and "Release history" in Settings, and the notices.
 */
export class ReleasesPage {
  readonly adaptersPanel: Locator;
  readonly settings: Locator;
  readonly autoUpdate: Locator;
  readonly updateServer: Locator;
  readonly checkForUpdates: Locator;
  readonly updateResults: Locator;
  readonly releaseHistory: Locator;
  readonly versionPath: Locator;
  readonly installVersionButton: Locator;

  constructor(readonly page: Page) {
    this.adaptersPanel = page.getByRole("dialog", { name: "Adapters" });
    this.settings = page.getByRole("dialog", { name: "Settings" });
    this.autoUpdate = this.settings.getByRole("switch", { name: "Install adapter updates automatically" });
    this.updateServer = this.settings.getByRole("textbox", { name: "Update server" });
    this.checkForUpdates = this.settings.getByRole("button", { name: "Check for updates" });
    this.updateResults = this.settings.getByRole("list", { name: "Update results" });
    this.releaseHistory = this.settings.getByRole("table", { name: "Release history" });
    this.versionPath = this.adaptersPanel.getByRole("textbox", { name: "Version file path" });
    this.installVersionButton = this.adaptersPanel.getByRole("button", {
      name: "Install version",
      exact: true,
    });
  }

  async openSettings(): Promise<void> {
    await this.page.getByRole("button", { name: "Settings", exact: true }).click();
    await expect(this.settings.getByRole("heading", { name: "Adapter updates" })).toBeVisible();
  }

  async closeSettings(): Promise<void> {
    await this.settings.getByRole("button", { name: "Close", exact: true }).click();
    await expect(this.settings).toBeHidden();
  }

  async openAdapters(): Promise<void> {
    await this.page.getByRole("button", { name: "Adapters", exact: true }).click();
    await expect(this.adaptersPanel.getByRole("heading", { name: "Adapters", exact: true })).toBeVisible();
  }

  async closeAdapters(): Promise<void> {
    await this.adaptersPanel.getByRole("button", { name: "Close", exact: true }).click();
    await expect(this.adaptersPanel).toBeHidden();
  }

  /** Opens the version history of an adapter (by name) in the open Adapters panel. */
  async openVersions(name: string): Promise<Locator> {
    const button = this.adaptersPanel.getByRole("button", { name: `Versions of ${name}` });
    if ((await button.getAttribute("aria-expanded")) !== "true") await button.click();
    const history = this.versions(name);
    await expect(history).toBeVisible();
    return history;
  }

  versions(name: string): Locator {
    return this.adaptersPanel.getByRole("region", { name: `Versions of ${name}` });
  }

  /** One version's card inside a version history. */
  version(history: Locator, version: string): Locator {
    return history.getByRole("article", { name: `Version ${version}` });
  }

  /** The status badge text of a version ("Live", "Retired", "Rejected", …). */
  status(card: Locator, label: string): Locator {
    return card.getByText(label, { exact: true });
  }

  /** A notice ("Coding 2.0.0 is live"), shown until dismissed. */
  notice(text: string | RegExp): Locator {
    return this.page.getByRole("status", { name: "Notifications" }).getByText(text);
  }

  async installVersion(path: string): Promise<void> {
    await this.versionPath.fill(path);
    await this.installVersionButton.click();
  }
}
