/**
 * Every input of the probe corpus (corpus/: GenUI specs, GenUI interactions, conversation
 * imports, file paths) through the real headless server over HTTP, with the real engine and
 * the demo model loaded. Each must get a clear refusal (a 4xx with the app's error shape and
 * a message) or a safe result (a 200 whose stored data passes the same validation), within
 * PROBE_BUDGET_MS; never a 5xx or "internal", never a hang, and the server answers afterwards.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { isAbsolute, join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConversationDetail } from "../../api";
import { validateDocument } from "../../api/genui";
import { runLogDocument } from "../../../testing/samples/genui-samples";
import { fixtureDemoDir } from "../../../testing/core/fixture-demo";
import { spawnTestEngine } from "../../../testing/engine/real-engine";
import { IMPORT_ROUTE } from "../api-routes";
import { startServer, type RunningServer } from "../start";
import {
  importProbes,
  interactionProbes,
  openAiModelProbes,
  pathProbes,
  specProbes,
  type PathProbe,
} from "../../../testing/corpora/probes";
import {
  callServer,
  expectClearAnswer,
  expectHealthy,
  PROBE_BUDGET_MS,
  probeBudget,
  type Answer,
} from "../../../testing/server/probe-http";
import { suiteDir } from "../../../testing/core/temp-dir";

/** Methods that take a file path from the caller. */
const PATH_METHODS = [
  "models.inspect",
  "models.open",
  "models.fit",
  "models.loadSettings",
  "models.setLoadSettings",
  "models.delete",
  "adapters.install",
  "adapters.installVersion",
] as const;

const dir = suiteDir("macaron-probes-");
let scratch: string;
let server: RunningServer;
const sockets: Server[] = [];

beforeAll(async () => {
  scratch = join(dir.path, "scratch");
  mkdirSync(scratch);
  server = await startServer({
    dataDir: join(dir.path, "data"),
    demoDir: await fixtureDemoDir(),
    rendererDir: join(dir.path, "no-ui"),
    spawnEngine: spawnTestEngine(),
  });
  const opened = await server.core.dispatch("models.openDemo", {}, { transport: "http" });
  if (!opened.ok) throw new Error(opened.error.message);
});
afterAll(async () => {
  for (const s of sockets) s.close();
  await server?.close();
});

/** POST one call to this file's server (probe-http.ts: the budget, the hang bound). */
function call(method: string, input: unknown, route?: string): Promise<Answer> {
  return callServer(server, method, input, route);
}

async function importDocument(doc: unknown): Promise<Answer> {
  return call("conversations.import", { json: JSON.stringify(doc) }, IMPORT_ROUTE);
}

function exportWith(title: string, ui: unknown) {
  return {
    format: "macaron-export",
    version: 1,
    exportedAt: 0,
    conversations: [
      {
        id: "probe",
        title,
        createdAt: 0,
        updatedAt: 0,
        messages: [
          { id: "q", role: "user", content: "Show me", status: "complete", createdAt: 0 },
          { id: "a", role: "assistant", content: "", status: "complete", createdAt: 0, format: "ui", ui },
        ],
      },
    ],
  };
}

async function conversationTitled(title: string): Promise<ConversationDetail> {
  const list = await call("conversations.list", {});
  const found = (list.body.value as { id: string; title: string }[]).find((c) => c.title === title);
  if (!found) throw new Error(`no conversation "${title}"`);
  return (await call("conversations.get", { id: found.id })).body.value as ConversationDetail;
}

describe("probe corpus: GenUI specs", () => {
  it("imports each spec refused whole or stored as a valid, inert document", async () => {
    const probes = specProbes();
    expect(probes.length).toBeGreaterThan(30);
    for (const [i, probe] of probes.entries()) {
      const title = `spec ${i}`;
      const answer = await importDocument(exportWith(title, probe.spec));
      expectClearAnswer(`spec "${probe.name}"`, answer);
      if (answer.status !== 200) continue;
      const ui = (await conversationTitled(title)).messages[1]?.ui ?? null;
      if (ui === null) continue;
      // What is stored is already what validation makes of it: validating again changes nothing.
      const again = validateDocument(ui);
      expect(again.ok, probe.name).toBe(true);
      if (again.ok) expect(again.document, probe.name).toEqual(ui);
      const text = JSON.stringify(ui);
      expect(text, probe.name).not.toMatch(/"url":"\s*(java\s*script|vbscript|data|file):/i);
      expect(text, probe.name).not.toMatch(/"type":"(Html|IFrame|card)"/);
    }
  });

  it("answers each hostile interaction with a form with a refusal or a recorded outcome", async () => {
    const imported = await importDocument({
      ...exportWith("interaction target", null),
      conversations: [
        {
          ...exportWith("interaction target", null).conversations[0]!,
          messages: [
            { id: "q", role: "user", content: "Log a run", status: "complete", createdAt: 0 },
            {
              id: "a",
              role: "assistant",
              content: "",
              status: "complete",
              createdAt: 0,
              format: "ui",
              ui: runLogDocument(),
            },
          ],
        },
      ],
    });
    expectClearAnswer("form import", imported);
    const target = await conversationTitled("interaction target");
    const messageId = target.messages[1]!.id;
    const outcomes: string[] = [];
    for (const probe of interactionProbes()) {
      const input: Record<string, unknown> = {
        conversationId: target.conversation.id,
        messageId,
        componentId: probe.componentId,
        action: probe.action,
      };
      if (probe.values !== undefined) input.values = probe.values;
      const answer = await call("genui.interact", input);
      expectClearAnswer(`interaction "${probe.name}"`, answer);
      outcomes.push(`${probe.name}: ${answer.status}`);
    }
    // Each probe reached the component check (a wrong conversation id would refuse them all alike).
    expect(outcomes.filter((o) => o.endsWith(": 200")).length, outcomes.join("\n")).toBeGreaterThan(0);
    // Ids that are not there are refused as such.
    const ghost = await call("genui.interact", {
      conversationId: target.conversation.id,
      messageId: "ghost",
      componentId: "run-form",
      action: "submit",
    });
    expect(ghost.status).toBeGreaterThanOrEqual(400);
    expect(ghost.status).toBeLessThan(500);
  });
});

describe("probe corpus: conversation imports", () => {
  it("refuses each hostile import with a reason, or imports it without a server error", async () => {
    const ids = async () =>
      ((await call("conversations.list", {})).body.value as { id: string }[]).map((c) => c.id);
    const before = new Set(await ids());
    let imported = 0;
    for (const probe of importProbes()) {
      const answer = await call("conversations.import", { json: probe.json }, IMPORT_ROUTE);
      expectClearAnswer(`import "${probe.name}"`, answer);
      if (answer.status === 200) imported += (answer.body.value as { conversations: number }).conversations;
      else if (answer.status === 400) expect(answer.body.error?.message, probe.name).toMatch(/import|input/i);
    }
    const added = (await ids()).filter((id) => !before.has(id));
    // A refused import writes nothing: only the accepted ones added conversations.
    expect(added.length).toBe(imported);
    // Nothing imported is left "streaming" (nothing here will ever finish it).
    for (const id of added) {
      const detail = (await call("conversations.get", { id })).body.value as ConversationDetail;
      expect(detail.messages.filter((m) => m.status === "streaming")).toEqual([]);
    }
  });
});

/** Make the probe's file in the scratch folder; the path(s) to send. */
function prepare(probe: PathProbe): string[] {
  if (probe.absolute !== undefined) return [probe.absolute];
  const at = join(scratch, probe.path!);
  switch (probe.make) {
    case "folder":
      mkdirSync(at, { recursive: true });
      break;
    case "empty":
      writeFileSync(at, "");
      break;
    case "text":
      writeFileSync(at, "these are my notes, not a model\n");
      break;
    case "fifo":
      execFileSync("mkfifo", [at]);
      break;
    case "socket": {
      const socket = createServer();
      socket.listen(at);
      sockets.push(socket);
      break;
    }
    case "symlink": {
      const target = probe.target!;
      symlinkSync(isAbsolute(target) ? target : join(scratch, target), at);
      break;
    }
    default:
      break;
  }
  return [at, relative(process.cwd(), at)];
}

describe("probe corpus: paths", () => {
  it("refuses each hostile path at once, naming the file as given, never the working directory", async () => {
    const probes = pathProbes();
    const cwd = process.cwd();
    const paths = probes.flatMap((probe) => prepare(probe).map((path) => ({ probe, path })));
    // Sockets listen asynchronously: wait until each is there.
    await Promise.all(
      sockets
        .filter((s) => !s.listening)
        .map((s) => new Promise<void>((done) => s.once("listening", () => done()))),
    );
    for (const { probe, path } of paths) {
      for (const method of PATH_METHODS) {
        const input = method === "models.setLoadSettings" ? { path, settings: {} } : { path };
        const what = `${method} on ${probe.name} (${JSON.stringify(path.slice(0, 80))})`;
        const answer = await call(method, input);
        expectClearAnswer(what, answer);
        expect(answer.status, what).not.toBe(200);
        const message = answer.body.error?.message ?? "";
        if (!path.includes(cwd)) expect(message, what).not.toContain(cwd);
        const resolved = resolve(path);
        if (path.length > 0 && resolved !== path && !path.includes(resolved)) {
          expect(message, what).not.toContain(resolved);
        }
      }
    }
    // Still serving, with the demo model loaded.
    const status = await call("models.status", {});
    expect(status.body.value).toMatchObject({ state: "ready" });
    await expectHealthy(server);
  });
});

describe("probe corpus: /v1 model names", () => {
  it("answers each hostile model name with an OpenAI-shaped 4xx, in time", async () => {
    for (const model of openAiModelProbes()) {
      const what = `model ${JSON.stringify(model.slice(0, 40))}`;
      const started = performance.now();
      const res = await fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "Hi" }], max_tokens: 2 }),
        signal: AbortSignal.timeout(PROBE_BUDGET_MS * 10),
      });
      const body = (await res.json()) as { error?: { message: string; type: string; code: string | null } };
      const ms = performance.now() - started;
      expect(ms, what).toBeLessThan(probeBudget(ms));
      expect(res.status, `${what}: ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${what}: ${JSON.stringify(body)}`).toBeLessThan(500);
      expect(body.error?.type, what).toBe("invalid_request_error");
      expect(body.error?.message.length ?? 0, what).toBeGreaterThan(10);
    }
  });
});
