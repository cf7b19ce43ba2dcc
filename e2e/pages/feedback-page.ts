import { expect, type Locator, type Page } from "@playwright/test";

/** Feedback under answers and the Privacy page, as a user sees them (roles and names only). */
export class FeedbackPage {
  readonly privacyButton: Locator;
  readonly privacy: Locator;
  readonly sharing: Locator;

  constructor(readonly page: Page) {
    this.privacyButton = page.getByRole("button", { name: "Privacy", exact: true });
    this.privacy = page.getByRole("dialog", { name: "Privacy" });
    this.sharing = this.privacy.getByRole("radiogroup", { name: "Feedback sharing" });
  }

  good(answer: Locator): Locator {
    return answer.getByRole("button", { name: "Good response" });
  }

  bad(answer: Locator): Locator {
    return answer.getByRole("button", { name: "Bad response" });
  }

  /** Thumbs-down with a reason ("What was wrong?" + Submit). */
  async rateBad(answer: Locator, reason: string): Promise<void> {
    await this.bad(answer).click();
    await answer.getByRole("textbox", { name: "What was wrong?" }).fill(reason);
    await answer.getByRole("button", { name: "Submit" }).click();
    await expect(answer.getByRole("textbox", { name: "What was wrong?" })).toBeHidden();
  }

  async correct(answer: Locator, text: string): Promise<void> {
    await answer.getByRole("button", { name: "Edit answer" }).click();
    await answer.getByRole("textbox", { name: "Corrected answer" }).fill(text);
    await answer.getByRole("button", { name: "Save correction" }).click();
    await expect(answer.getByRole("textbox", { name: "Corrected answer" })).toBeHidden();
  }

  async openPrivacy(): Promise<void> {
    await this.privacyButton.click();
    await expect(this.privacy.getByRole("heading", { name: "Privacy", exact: true })).toBeVisible();
    await expect(this.sharing).toBeVisible();
  }

  async closePrivacy(): Promise<void> {
    await this.privacy.getByRole("button", { name: "Close", exact: true }).click();
    await expect(this.privacy).toBeHidden();
  }

  level(label: "Off" | "Ratings only" | "Ratings and conversation text"): Locator {
    return this.sharing.getByRole("radio", { name: label, exact: true });
  }

  /** Choose a level that shares more, then confirm it in the page. */
  async turnOn(label: "Ratings only" | "Ratings and conversation text"): Promise<void> {
    await this.level(label).check();
    await this.privacy.getByRole("button", { name: "Turn on sharing" }).click();
    await expect(this.level(label)).toBeChecked();
    await expect(this.privacy.getByRole("button", { name: "Turn on sharing" })).toBeHidden();
  }

  /** The JSON block of "Preview next upload". */
  async previewText(): Promise<string> {
    await this.privacy.getByRole("button", { name: "Preview next upload" }).click();
    const block = this.privacy.getByLabel("Next upload JSON");
    await expect(block).toBeVisible();
    return (await block.textContent()) ?? "";
  }
}
