/**
 * Numbered SQL migrations, one folder per engine (migrations/<engine>/NNN_name.sql). Both
 * engines use the same numbers for the same change; schema_migrations records what ran.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(engine: "sqlite" | "postgres"): Migration[] {
  const dir = fileURLToPath(new URL(`./migrations/${engine}/`, import.meta.url));
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({
      version: Number(f.slice(0, 3)),
      name: f.slice(4, -4),
      sql: readFileSync(`${dir}${f}`, "utf8"),
    }));
}
