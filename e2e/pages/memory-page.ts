import { expect, type Locator, type Page } from "@playwright/test";

/** The Memory panel, search, export/import and the database screen, by roles and names. */
export class MemoryPage {
  readonly openButton: Locator;
  readonly panel: Locator;
  readonly search: Locator;
  readonly searchResults: Locator;

  constructor(readonly page: Page) {
    this.openButton = page.getByRole("button", { name: "Memory", exact: true });
    this.panel = page.getByRole("dialog", { name: "Memory" });
    this.search = page.getByRole("searchbox", { name: "Search conversations" });
    this.searchResults = page.getByRole("list", { name: "Search results" });
  }

  async open(): Promise<void> {
    await this.openButton.click();
    await expect(this.panel.getByRole("heading", { name: "Memory", exact: true })).toBeVisible();
    await expect(this.panel.getByRole("switch", { name: "Use memory" })).toBeEnabled();
  }

  async close(): Promise<void> {
    await this.panel.getByRole("button", { name: "Close", exact: true }).click();
    await expect(this.panel).toBeHidden();
  }

  /** A listed memory (its list item is named by its text). */
  memory(text: string): Locator {
    return this.panel.getByRole("listitem", { name: text, exact: true });
  }

  /** "Saved to memory: …" under an answer to a "remember that …" message. */
  savedNote(answer: Locator): Locator {
    return answer.getByRole("note", { name: "Saved to memory" });
  }

  async add(text: string): Promise<void> {
    await this.panel.getByRole("textbox", { name: "New memory" }).fill(text);
    await this.panel.getByRole("button", { name: "Add memory" }).click();
    await expect(this.memory(text)).toBeVisible();
  }
}
