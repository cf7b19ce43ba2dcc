import { expect, type Locator, type Page } from "@playwright/test";

/** Generated interfaces inside answers, by role and accessible name. */
export class GenuiPage {
  constructor(readonly page: Page) {}

  /** The generated interface of an answer. */
  ui(answer: Locator): Locator {
    return answer.getByRole("group", { name: "Generated interface" });
  }

  form(scope: Locator, name: string): Locator {
    return scope.getByRole("form", { name });
  }

  /** A form after it was submitted: a region showing the values and "Submitted". */
  submittedForm(scope: Locator, name: string): Locator {
    return scope.getByRole("region", { name });
  }

  /** Fill the "Log your run" form of the fixtures (testing/samples/genui-samples.ts runLogForm). */
  async fillRunForm(form: Locator): Promise<void> {
    await form.getByRole("textbox", { name: "Distance (km)" }).fill("5.5");
    await form.getByLabel("Date").fill("2024-05-01");
    await form.getByRole("button", { name: /How did it feel/ }).click();
    await this.page.getByRole("option", { name: "Hard" }).click();
    await form.getByRole("textbox", { name: "Notes" }).fill("Windy by the river");
    await form.getByText("It was a race").click();
    const effort = form.getByRole("slider", { name: "Effort" });
    await effort.focus();
    await effort.press("ArrowRight");
    await effort.press("ArrowRight");
    await expect(effort).toHaveValue("7");
  }

  /** Part of an answer that could not be shown (an inert note). */
  fallbacks(scope: Locator): Locator {
    return scope.getByRole("note", { name: "Part of the answer could not be shown" });
  }
}
