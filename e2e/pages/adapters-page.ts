import { expect, type Locator, type Page } from "@playwright/test";

/** The adapter controls as a user sees them: picker, routing chips, answer again, panel, settings. */
export class AdaptersPage {
  /** The conversation's adapter choice beside the composer. */
  readonly picker: Locator;
  readonly openPanelButton: Locator;
  readonly panel: Locator;
  readonly adapterPath: Locator;
  readonly installButton: Locator;

  constructor(readonly page: Page) {
    this.picker = page.getByRole("combobox", { name: "Adapters" });
    this.openPanelButton = page.getByRole("button", { name: "Adapters", exact: true });
    this.panel = page.getByRole("dialog", { name: "Adapters" });
    this.adapterPath = this.panel.getByRole("textbox", { name: "Adapter file path" });
    this.installButton = this.panel.getByRole("button", { name: "Install adapter", exact: true });
  }

  /** Pick by visible label: "Auto (router)", "Base model only" or an adapter's name. */
  async choose(label: string): Promise<void> {
    await this.picker.selectOption({ label });
  }

  /** The "which adapter answered" chip inside an answer (its accessible name says it in full). */
  routingChip(answer: Locator): Locator {
    return answer.getByRole("note", { name: /^Answered by/ });
  }

  async answerAgainWith(answer: Locator, label: string): Promise<void> {
    await answer.getByRole("button", { name: "Answer again with…" }).click();
    await this.page
      .getByRole("menu", { name: "Answer again with" })
      .getByRole("menuitem", { name: label })
      .click();
  }

  async openPanel(): Promise<void> {
    await this.openPanelButton.click();
    await expect(this.panel.getByRole("heading", { name: "Adapters", exact: true })).toBeVisible();
  }

  async closePanel(): Promise<void> {
    await this.panel.getByRole("button", { name: "Close", exact: true }).click();
    await expect(this.panel).toBeHidden();
  }

  /** The table row of an installed adapter (by its name). */
  row(name: string): Locator {
    // The row header holds the name, then the description: match the name at its start.
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const header = this.page.getByRole("rowheader", { name: new RegExp(`^${escaped}\\b`) });
    return this.panel.getByRole("row").filter({ has: header });
  }

  dataRows(): Locator {
    return this.panel.getByRole("row").filter({ has: this.page.getByRole("rowheader") });
  }

  async install(path: string): Promise<void> {
    await this.adapterPath.fill(path);
    await this.installButton.click();
  }

  async remove(name: string): Promise<void> {
    const row = this.row(name);
    await row.getByRole("button", { name: `Remove ${name}` }).click();
    await row.getByRole("button", { name: "Yes, remove" }).click();
    await expect(row).toHaveCount(0);
  }
}
