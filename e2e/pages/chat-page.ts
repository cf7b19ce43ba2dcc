import { expect, type Locator, type Page } from "@playwright/test";

/** The chat window as a user sees it: roles and accessible names only. */
export class ChatPage {
  readonly message: Locator;
  readonly send: Locator;
  readonly stop: Locator;
  readonly newChat: Locator;
  readonly conversations: Locator;
  readonly transcript: Locator;

  constructor(readonly page: Page) {
    this.message = page.getByRole("textbox", { name: "Message" });
    this.send = page.getByRole("button", { name: "Send" });
    this.stop = page.getByRole("button", { name: "Stop" });
    this.newChat = page.getByRole("button", { name: "New chat" });
    this.conversations = page.getByRole("navigation", { name: "Conversations" });
    this.transcript = page.getByRole("log");
  }

  /** Opens the URL printed by the server (token in it) and waits for the app's readiness signal. */
  async open(url: string): Promise<void> {
    await this.page.goto(url);
    await this.waitLoaded();
  }

  async waitLoaded(): Promise<void> {
    await expect(this.page.locator("[data-app-state='loaded']")).toBeVisible();
  }

  assistantMessages(): Locator {
    return this.transcript.getByRole("article", { name: "Macaron" });
  }

  userMessages(): Locator {
    return this.transcript.getByRole("article", { name: "You" });
  }

  /** The generated text of an answer (not its "Macaron" label or chips). */
  answerText(answer: Locator): Locator {
    return answer.locator("p").first();
  }

  async sendMessage(text: string): Promise<void> {
    await this.message.fill(text);
    await this.message.press("Enter");
  }

  /** `count` answers in the transcript, none of them still being written. */
  async waitAnswered(count: number): Promise<void> {
    await expect(this.assistantMessages()).toHaveCount(count);
    await expect(this.transcript.locator("[aria-busy='true']")).toHaveCount(0);
  }

  /** The "‹ 2 / 3 ›" control of a message, by its buttons' names and its "2 / 3" text. */
  versions(message: Locator): { previous: Locator; next: Locator; count: Locator } {
    const group = message.getByRole("group", { name: "Versions" });
    return {
      previous: group.getByRole("button", { name: "Previous version" }),
      next: group.getByRole("button", { name: "Next version" }),
      count: group.getByText(/^\d+ \/ \d+$/),
    };
  }

  /**
   * Loading a model is the slowest step of a spec and scales with the machine's load (other
   * specs, builds): `timeout` gives it its own bound; the readiness signal is still the enabled
   * message box.
   */
  async useDemoModel({ timeout }: { timeout?: number } = {}): Promise<void> {
    await this.page.getByRole("button", { name: "Try the demo model" }).click();
    await expect(this.message).toBeEnabled({ timeout });
    await expect(this.page.getByText(/Demo — a tiny trained model/).first()).toBeVisible();
  }
}
