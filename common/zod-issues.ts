import type { z } from "zod";

/** A readable sentence from zod issues, e.g. `text: Too small: expected string to have >=1 characters`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const where = issue.path.length > 0 ? issue.path.map(String).join(".") : "input";
      return `${where}: ${issue.message}`;
    })
    .join("; ");
}
