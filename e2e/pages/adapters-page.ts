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

  /** From the header's button, or at phone width from its "More" menu. */
  async openPanel(): Promise<void> {
    if (await this.openPanelButton.isVisible()) await this.openPanelButton.click();
    else {
      await this.page.getByRole("button", { name: "More", exact: true }).click();
      await this.page.getByRole("menuitem", { name: "Adapters", exact: true }).click();
    }
    await expect(this.panel.getByRole("heading", { name: "Adapters", exact: true })).toBeVisible();
  }

  async closePanel(): Promise<void> {
    await this.panel.getByRole("button", { name: "Close", exact: true }).click();
    await expect(this.panel).toBeHidden();
  }

  /** The card of an installed adapter (an article named by the adapter's name). */
  card(name: string): Locator {
    return this.panel.getByRole("article", { name, exact: true });
  }

  /** Every installed adapter's card. */
  cards(): Locator {
    return this.panel.getByRole("list", { name: "Installed adapters" }).getByRole("article");
  }

  /** The value of one fact on a card ("Version", "Role", "Size", "Uses", "Base model"). */
  fact(name: string, label: string): Locator {
    return this.card(name)
      .locator("dl > div")
      .filter({ has: this.page.getByRole("term").filter({ hasText: new RegExp(`^${label}$`) }) })
      .getByRole("definition");
  }

  enableSwitch(name: string): Locator {
    return this.card(name).getByRole("switch", { name: `Enable ${name}` });
  }

  /**
   * Flip the enable switch as a pointer does: the switch's input is visually hidden inside its
   * label (react-aria), so the label is what takes the click.
   */
  async toggleEnabled(name: string): Promise<void> {
    await this.enableSwitch(name).locator("xpath=ancestor::label[1]").click();
  }

  scaleSlider(name: string): Locator {
    return this.card(name).getByRole("slider", { name: `Scale for ${name}` });
  }

  /** Set the scale with the keyboard, one 0.05 step per arrow press, as a user can. */
  async setScale(name: string, value: number): Promise<void> {
    const slider = this.scaleSlider(name);
    const steps = Math.round((value - Number(await slider.inputValue())) / 0.05);
    await slider.focus();
    for (let i = 0; i < Math.abs(steps); i++) await slider.press(steps > 0 ? "ArrowRight" : "ArrowLeft");
    await expect(slider).toHaveValue(String(value));
  }

  /** The remove confirmation (a popover dialog) of an adapter. */
  removeDialog(name: string): Locator {
    return this.page.getByRole("dialog", { name: `Remove ${name}?` });
  }

  async install(path: string): Promise<void> {
    await this.adapterPath.fill(path);
    await this.installButton.click();
  }

  async remove(name: string): Promise<void> {
    const card = this.card(name);
    await card.getByRole("button", { name: `Remove ${name}` }).click();
    await this.removeDialog(name).getByRole("button", { name: "Yes, remove" }).click();
    await expect(card).toHaveCount(0);
  }
}
