import { expect, type Locator, type Page } from "@playwright/test";

/** The "Chat settings" dialog and an answer's record of what it was generated with. */
export class ConversationSettingsPage {
  readonly opener: Locator;
  readonly dialog: Locator;

  constructor(readonly page: Page) {
    this.opener = page.getByRole("button", { name: "Chat settings", exact: true });
    this.dialog = page.getByRole("dialog", { name: "Chat settings" });
  }

  /** Opens it from the keyboard (the header button focused, Enter) and waits for its values. */
  async open(): Promise<void> {
    await this.opener.focus();
    await this.page.keyboard.press("Enter");
    await expect(this.dialog).toBeVisible();
    await expect(this.dialog.getByRole("status")).toHaveCount(0);
  }

  systemPrompt(): Locator {
    return this.dialog.getByLabel("System prompt", { exact: true });
  }

  field(label: string): Locator {
    return this.dialog.getByLabel(label, { exact: true });
  }

  /** Types into a number field and leaves it (react-aria commits a number on blur). */
  async setNumber(label: string, value: string): Promise<void> {
    const input = this.field(label);
    await input.fill(value);
    await input.press("Tab");
  }

  async save(): Promise<void> {
    await this.dialog.getByRole("button", { name: "Save", exact: true }).click();
    await expect(this.dialog).toHaveCount(0);
  }

  async saveAsPreset(name: string): Promise<void> {
    await this.dialog.getByRole("textbox", { name: "Preset name" }).fill(name);
    await this.dialog.getByRole("button", { name: "Save as preset" }).click();
    await expect(this.presetPicker()).toContainText(name);
  }

  presetPicker(): Locator {
    return this.dialog.getByRole("button", { name: /Preset/ }).first();
  }

  async applyPreset(name: string): Promise<void> {
    await this.presetPicker().click();
    await this.page.getByRole("option", { name }).click();
  }

  /** What an answer was generated with, as its record shows it. */
  record(answer: Locator): Locator {
    return answer.locator(".generation-settings");
  }
}
