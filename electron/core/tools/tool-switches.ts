/**
 * Which tools the user turned off, by server and tool name, in <dataDir>/tool-switches.json
 * (0600). Tools are on by default: adding a server is the user's choice, and each call still
 * asks permission. Shared by the catalog (built-in tools) and the MCP hub (its servers' tools).
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { makePrivate } from "../../../common/files/private-files";

export const TOOL_SWITCHES_FILE = "tool-switches.json";

const SwitchesFile = z.object({ disabled: z.record(z.string(), z.array(z.string())) });

export class ToolSwitches {
  private readonly disabled = new Map<string, Set<string>>();
  private readonly listeners = new Set<(server: string) => void>();
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly dataDir: string,
    private readonly log: (message: string, err: unknown) => void = console.error,
  ) {
    try {
      const parsed = SwitchesFile.safeParse(
        JSON.parse(readFileSync(join(dataDir, TOOL_SWITCHES_FILE), "utf8")),
      );
      if (parsed.success)
        for (const [server, names] of Object.entries(parsed.data.disabled))
          this.disabled.set(server, new Set(names));
      else log(`${TOOL_SWITCHES_FILE} is not usable; every tool is on`, parsed.error);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT")
        log(`could not read ${TOOL_SWITCHES_FILE}; every tool is on`, err);
    }
  }

  isEnabled(server: string, name: string): boolean {
    return !this.disabled.get(server)?.has(name);
  }

  /** Turn a tool on or off; saved in the background (`saved()` waits for it). */
  set(server: string, name: string, enabled: boolean): void {
    if (this.isEnabled(server, name) === enabled) return;
    const names = this.disabled.get(server) ?? new Set<string>();
    if (enabled) names.delete(name);
    else names.add(name);
    if (names.size > 0) this.disabled.set(server, names);
    else this.disabled.delete(server);
    this.changed(server);
  }

  /** Forget a removed server's switches (a new server of the same name starts with all on). */
  forget(server: string): void {
    if (this.disabled.delete(server)) this.changed(server);
  }

  /** `listener(server)` after each change; returns a disposer. */
  onChange(listener: (server: string) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Resolves once every change so far is on disk. */
  saved(): Promise<void> {
    return this.saving;
  }

  private changed(server: string): void {
    const document = {
      disabled: Object.fromEntries([...this.disabled].map(([s, names]) => [s, [...names].sort()])),
    };
    this.saving = this.saving
      .then(() => this.write(`${JSON.stringify(document, null, 2)}\n`))
      .catch((err: unknown) => this.log(`could not save ${TOOL_SWITCHES_FILE}`, err));
    for (const listener of this.listeners) listener(server);
  }

  private async write(json: string): Promise<void> {
    const path = join(this.dataDir, TOOL_SWITCHES_FILE);
    const temporary = `${path}.${randomBytes(4).toString("hex")}.tmp`;
    await writeFile(temporary, json, { mode: 0o600 });
    await makePrivate(temporary);
    await rename(temporary, path);
  }
}
