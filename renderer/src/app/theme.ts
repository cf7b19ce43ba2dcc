import { z } from "zod";
import type { AppSettings } from "../../../electron/api";

export type ThemeChoice = AppSettings["theme"];

const ThemeChoice = z.enum(["system", "light", "dark"]);
/** The last choice, kept in this browser so the first paint already has it (settings load later). */
const CACHE_KEY = "macaron.theme.v1";

function storage(): Storage | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null; // storage disabled: the first paint follows the system
  }
}

/** The cached choice, "system" when there is none or it is not one of the three. */
export function cachedTheme(): ThemeChoice {
  const parsed = ThemeChoice.safeParse(storage()?.getItem(CACHE_KEY));
  return parsed.success ? parsed.data : "system";
}

/**
 * Applies a choice as `data-theme` on <html>; base.css maps it to `color-scheme`, and every
 * colour is a light-dark() pair, so "system" follows the OS live without a listener here.
 */
export function applyTheme(choice: ThemeChoice, root: HTMLElement = document.documentElement): void {
  root.dataset.theme = choice;
  try {
    storage()?.setItem(CACHE_KEY, choice);
  } catch {
    // Full or disabled storage: only the next first paint is affected.
  }
}
