import { expect, type Locator, type Page } from "@playwright/test";

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Finding, downloading and loading models as a user does: roles and accessible names only. */
export class ModelsPage {
  readonly findModel: Locator;
  readonly dialog: Locator;
  readonly search: Locator;
  readonly fit: Locator;
  readonly loadDialog: Locator;

  constructor(readonly page: Page) {
    this.findModel = page.getByRole("button", { name: "Find a model" });
    this.dialog = page.getByRole("dialog", { name: "Models" });
    this.search = this.dialog.getByRole("searchbox", { name: "Search Hugging Face for GGUF models" });
    this.fit = this.dialog.getByRole("status", { name: "Fit estimate" });
    this.loadDialog = page.getByRole("dialog", { name: /^Load / });
  }

  async open(): Promise<void> {
    await this.findModel.click();
    await expect(this.dialog).toBeVisible();
  }

  /** Types a query and waits for its results (the search runs once typing pauses). */
  async searchFor(query: string): Promise<void> {
    await this.search.fill(query);
    await expect(this.dialog.getByRole("heading", { name: `Results for “${query}”` })).toBeVisible();
  }

  repoButton(repo: string): Locator {
    return this.dialog.getByRole("button", { name: new RegExp(`^${escapeRegExp(repo)}`) });
  }

  async openRepo(repo: string): Promise<void> {
    await this.repoButton(repo).click();
    await expect(
      this.dialog.getByRole("heading", { name: new RegExp(`^${escapeRegExp(repo)}`) }),
    ).toBeVisible();
  }

  fileChoice(quant: string): Locator {
    return this.dialog.getByRole("radio", { name: new RegExp(`^${escapeRegExp(quant)}\\b`) });
  }

  downloadButton(): Locator {
    return this.dialog.getByRole("button", { name: /^Download / });
  }

  progress(): Locator {
    return this.dialog.getByRole("progressbar", { name: /^Downloading / });
  }

  button(name: string | RegExp): Locator {
    return this.dialog.getByRole("button", { name, exact: typeof name === "string" });
  }

  /** The load settings dialog's context field. */
  contextField(): Locator {
    return this.loadDialog.getByRole("spinbutton", { name: "Context size (tokens)" });
  }

  async loadWithContext(contextSize: number): Promise<void> {
    await expect(this.contextField()).toBeVisible();
    await this.contextField().fill(String(contextSize));
    // The estimate follows the chosen context.
    await expect(this.loadDialog.getByRole("status", { name: "Fit estimate" })).toContainText(
      new RegExp(`Context ${contextSize.toLocaleString("en")} tokens`),
    );
    await this.loadDialog.getByRole("button", { name: "Load model" }).click();
    await expect(this.loadDialog).toBeHidden({ timeout: 60_000 });
  }

  /** Search, open the repo, download the file with this quantization and load it with its defaults. */
  async downloadAndLoad(query: string, repo: string, quant: string, file: string): Promise<void> {
    await this.open();
    await this.searchFor(query);
    await this.openRepo(repo);
    await this.fileChoice(quant).check();
    await this.downloadButton().click();
    await expect(this.dialog.getByText(`${file} is on this computer.`)).toBeVisible({ timeout: 60_000 });
    await this.button("Load…").click();
    await expect(this.contextField()).toBeVisible();
    await this.loadDialog.getByRole("button", { name: "Load model" }).click();
    await expect(this.loadDialog).toBeHidden({ timeout: 60_000 });
    await expect(this.dialog).toBeHidden();
  }
}
