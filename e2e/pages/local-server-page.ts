import { expect, type Locator, type Page } from "@playwright/test";

/**
 * Settings → "Local API server" as a user sees it: the switch, the port, the address and key
 * shown while it runs, the regenerate confirmation. Roles and accessible names only.
 */
export class LocalServerPage {
  readonly settings: Locator;
  readonly section: Locator;
  readonly toggle: Locator;
  readonly port: Locator;
  readonly state: Locator;

  constructor(readonly page: Page) {
    this.settings = page.getByRole("dialog", { name: "Settings" });
    this.section = this.settings.getByRole("region", { name: "Local API server" });
    this.toggle = this.section.getByRole("switch", { name: "Serve the API on this computer" });
    this.port = this.section.getByRole("textbox", { name: "Port" });
    this.state = this.section
      .getByRole("status")
      .filter({ hasText: /^(Off|Not running|Running on port \d+)\.$/ });
  }

  async openSettings(): Promise<void> {
    await this.page.getByRole("button", { name: "Settings", exact: true }).click();
    await expect(this.section.getByRole("heading", { name: "Local API server" })).toBeVisible();
  }

  /** Types a port and applies it with the keyboard (Enter submits the port form). */
  async usePort(port: number): Promise<void> {
    await this.port.fill(String(port));
    await this.port.press("Enter");
    await expect(this.port).toHaveValue(String(port));
    await expect(this.section.getByRole("button", { name: "Use this port" })).toBeDisabled();
  }

  async expectRunning(port: number): Promise<void> {
    await expect(this.state).toHaveText(`Running on port ${port}.`);
  }

  /** The base URL shown for clients (`http://127.0.0.1:PORT/v1`). */
  async address(): Promise<string> {
    return (await this.section.getByLabel("Address", { exact: true }).textContent()) ?? "";
  }

  /** Reveals the key and reads it. */
  async apiKey(): Promise<string> {
    const show = this.section.getByRole("button", { name: "Show key" });
    if (await show.isVisible()) await show.click();
    const key = this.section.getByLabel("API key", { exact: true });
    await expect(key).toHaveText(/^[0-9a-f]{64}$/);
    return (await key.textContent()) ?? "";
  }

  async regenerateKey(): Promise<void> {
    await this.section.getByRole("button", { name: "Regenerate key…" }).click();
    const confirm = this.section.getByRole("group", { name: "Regenerate the key?" });
    await expect(confirm).toContainText("Clients using the old key stop working.");
    await confirm.getByRole("button", { name: "Yes, new key" }).click();
    await expect(confirm).toBeHidden();
  }
}
