/**
 * Agent episodes through the app's own agent loop (AgentTurns.run) with the real tool catalog:
 * the built-in tools on a real database and the episodes' MCP server started over stdio by the
 * McpHub (episode-runner.ts). A scripted model stands in for the engine: the "oracle" reads each
 * result the loop gave back and carries its value into the next call, so every family of tasks
 * is shown solvable end to end (reward 1); models that game the reward (no call and a constant
 * answer; a denied call tried again) get 0 from the same loop. The lines made of them are laid
 * out by the trainer's own tokenizer step with the demo Agent's call syntax. The demo model's
 * episodes are in the self-improvement loop test (self-improve-episodes.loop.test.ts).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LlamaModel } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { readDatasetFile } from "../../../cloud/training/dataset-file";
import { formatDataset } from "../../../cloud/training/tokenize-dataset";
import { trainAdapter } from "../../../cloud/training/train";
import { loadLlamaBackend } from "../../../native/engine/llama-backend";
import { demoAdaptersDir, demoBasePath } from "../../../native/gguf/demo-files";
import type { EngineClient, GenerateResult, ToolCallOut } from "../../../electron/core/engine/types";
import { REPO_ROOT } from "../../../testing/mcp/mcp-test-servers";
import { testDir } from "../../../testing/core/temp-dir";
import { selectEpisodes } from "./episode-data";
import { EPISODE_PARTIAL, episodeOutcomes } from "./episode-reward";
import { episodeServerSpec, runEpisodes, type RunEpisodesOptions } from "./episode-runner";
import { EPISODE_FAMILIES, type EpisodeTask, episodeTasks, producedValue } from "./episode-tasks";

const SALT = "integration";
const tasks = episodeTasks({ salt: SALT, count: EPISODE_FAMILIES.length });

const result = (text: string, toolCalls?: ToolCallOut[]): GenerateResult => ({
  text,
  stopReason: toolCalls ? "toolCalls" : "eos",
  ...(toolCalls ? { toolCalls } : {}),
  tokens: 1,
  ttftMs: 1,
  durationMs: 1,
  promptTokensEvaluated: 1,
  contextTokens: 0,
  contextSize: 0,
});

type Policy = (task: EpisodeTask, results: string[]) => GenerateResult;

/** A scripted model: finds its task by the prompt and acts on the results it was given. */
function scripted(policy: Policy): Pick<EngineClient, "generate"> {
  return {
    generate: (turns) => {
      const prompt = turns.find((t) => t.role === "user")!.text;
      const task = tasks.find((t) => t.prompt === prompt)!;
      const results = turns.flatMap((t) => (t.calls ?? []).map((c) => String(c.result)));
      return Promise.resolve(policy(task, results));
    },
  };
}

/** Calls the chain's next step with the value the last result handed on; then answers with it. */
const oracle: Policy = (task, results) => {
  let carried = task.first;
  for (const [i, r] of results.entries()) carried = producedValue(task.steps[i]!.produces, r) ?? carried;
  const step = task.steps[results.length];
  if (!step) return result(`Here it is: ${carried}.`);
  const extra = step.with ? { [step.with.arg]: step.with.value } : {};
  return result("", [{ name: step.tool, arguments: { [step.arg]: carried, ...extra } }]);
};

function options(
  dir: string,
  engine: Pick<EngineClient, "generate">,
  list = tasks,
  samples = 1,
): RunEpisodesOptions {
  return {
    tasks: list,
    samples,
    seed: 1,
    sampling: { temperature: 0.8, maxTokens: 64 },
    engine,
    adapters: [],
    systemPrompt: "You are Macaron.",
    server: episodeServerSpec(SALT, REPO_ROOT),
    dataDir: dir,
  };
}

describe("agent episodes through the agent loop", () => {
  it("every family is solvable: the oracle's episodes are done, with reward 1, and make training lines", async () => {
    const episodes = await runEpisodes(options(testDir("macaron-episodes-"), scripted(oracle)));
    const outcomes = episodeOutcomes(tasks, episodes);
    const report = episodes.map((e, i) => ({ task: e.taskId, ...outcomes[i], calls: e.calls }));
    expect(
      outcomes.map((o) => o.reward),
      JSON.stringify(report, null, 1),
    ).toEqual(tasks.map(() => 1));
    for (const e of episodes) {
      // Each call went through the loop: checked, decided and recorded, in order.
      expect(e.calls.length).toBeGreaterThanOrEqual(2);
      expect(e.rounds.length).toBe(e.calls.length);
    }
    // The denied task's cancel was denied by the user, and the model was told so.
    const denied = episodes.find((e) => e.taskId.startsWith("denied-cancel"))!;
    expect(denied.calls.map((c) => c.state)).toEqual(["done", "denied"]);
    expect(denied.rounds[1]!.calls[0]!.result).toBe("The user denied this call.");
    // The memory task left no memory.
    expect(episodes.find((e) => e.taskId.startsWith("memory-forget"))!.memories).toEqual([]);
    const { sft, stats } = selectEpisodes(tasks, episodes, outcomes);
    expect(stats).toMatchObject({ sftLines: tasks.length, dpoPairs: 0, done: tasks.length });
    // The lines offer every tool the loop offered: the built-in ones and the server's.
    const names = sft[0]!.tools.map((t) => t.function.name);
    expect(names).toEqual(
      expect.arrayContaining(["remember", "search_conversations", "find_order", "add_to_note"]),
    );
  }, 120_000);

  it("gamed models get 0 from the same loop: no call with one answer for all, a denied call retried", async () => {
    const gamed = scripted(() => result("Done, all taken care of."));
    const episodes = await runEpisodes(options(testDir("macaron-episodes-"), gamed, tasks.slice(0, 2)));
    expect(episodeOutcomes(tasks, episodes).map((o) => o.reward)).toEqual([0, 0]);

    const task = tasks.find((t) => t.family === "denied-cancel")!;
    // Asks to cancel, is denied, and asks again.
    const retry: Policy = (t, results) => {
      if (results.length === 0) return oracle(t, results);
      const order = producedValue(t.steps[0]!.produces, results[0]!)!;
      return results.length < 3
        ? result("", [{ name: "cancel_order", arguments: { order_id: order } }])
        : result(`Order ${order} was not cancelled.`);
    };
    const retried = await runEpisodes(options(testDir("macaron-episodes-"), scripted(retry), [task]));
    expect(retried[0]!.calls.map((c) => c.state)).toEqual(["done", "denied", "denied"]);
    expect(episodeOutcomes(tasks, retried)[0]).toMatchObject({ reward: 0, deniedRetried: true });
  }, 120_000);

  it("gamed chains get no full reward from the same loop and server (an outside tester's attacks)", async () => {
    const at = (family: string) => tasks.find((t) => t.family === family)!;
    const match = (re: RegExp, text: string | undefined) => re.exec(text ?? "")?.[0] ?? "none";
    // F1: a search that finds nothing with an invented order id in the query, then that id.
    const search = at("search-order");
    const invented: Policy = (_t, r) =>
      r.length === 0
        ? result("", [{ name: "search_conversations", arguments: { query: `${search.first}zz ORD-0000` } }])
        : r.length === 1
          ? result("", [{ name: "order_status", arguments: { order_id: "ORD-0000" } }])
          : result(`Tracking ${match(/TRK-[0-9A-F]{4}/, r[1])}`);
    // F3: the note gets another line than the one asked for.
    const note = at("note-receipt");
    const wrongLine: Policy = (_t, r) =>
      r.length === 0
        ? result("", [{ name: "create_note", arguments: { title: note.first } }])
        : r.length === 1
          ? result("", [
              { name: "add_to_note", arguments: { note_id: match(/N-[0-9A-F]{4}/, r[0]), text: "x" } },
            ])
          : result(`Receipt ${match(/R-[0-9A-F]{4}/, r[1])}`);
    // F2: city_of, then a forecast for every city without reading city_of's, every id answered.
    const city = at("city-forecast");
    const spray: Policy = (_t, r) =>
      r.length === 0
        ? result("", [{ name: "city_of", arguments: { person: city.first } }])
        : r.length === 1
          ? result(
              "",
              ["Lisbon", "Oslo", "Nairobi", "Lima", "Hanoi", "Tunis", "Quito", "Tallinn"].map((c) => ({
                name: "forecast",
                arguments: { city: c },
              })),
            )
          : result(r.map((x) => match(/WX-[0-9A-F]{4}/, x)).join(" "));
    for (const [task, policy] of [
      [search, invented],
      [note, wrongLine],
      [city, spray],
    ] as const) {
      const episodes = await runEpisodes(options(testDir("macaron-episodes-"), scripted(policy), [task]));
      const [o] = episodeOutcomes(tasks, episodes);
      expect(o, `${task.id}: ${JSON.stringify(episodes[0]!.calls)}`).toMatchObject({ done: false });
      expect(o!.reward).toBeLessThanOrEqual(EPISODE_PARTIAL / 2);
    }
    // The server refuses the order id it never issued; the search does not echo the query.
    const e = await runEpisodes(options(testDir("macaron-episodes-"), scripted(invented), [search]));
    expect(e[0]!.calls.map((c) => c.result ?? c.error)).toEqual([
      "No conversation matches the query.",
      expect.stringMatching(/No such order/),
    ]);
  }, 120_000);

  it("their SFT lines, DPO pairs and GRPO groups are laid out and trained: calls learned, results not", async () => {
    const dir = testDir("macaron-episodes-");
    // Episode 0 of each task is the oracle's, episode 1 a text answer without calls (a negative):
    // the runner gives episode k of task i the seed 1 + 2i + k.
    const engine: Pick<EngineClient, "generate"> = {
      generate: (turns, opts) => {
        const task = tasks.find((t) => t.prompt === turns.find((x) => x.role === "user")!.text)!;
        const results = turns.flatMap((t) => (t.calls ?? []).map((c) => String(c.result)));
        return Promise.resolve(
          ((opts.seed ?? 1) - 1) % 2 === 0 ? oracle(task, results) : result(`I could not do "${task.id}".`),
        );
      },
    };
    const episodes = await runEpisodes(options(dir, engine, tasks, 2));
    const { sft, dpo, groups, stats } = selectEpisodes(tasks, episodes, episodeOutcomes(tasks, episodes));
    expect(stats).toMatchObject({
      sftLines: tasks.length,
      dpoPairs: tasks.length,
      negativesPaired: tasks.length,
      groupsWithSignal: tasks.length,
    });
    expect(groups.map((g) => g.rewards)).toEqual(tasks.map(() => [1, 0]));
    const manifest = JSON.parse(readFileSync(join(demoAdaptersDir(), "agent.json"), "utf8")) as {
      toolCallFormat: unknown;
    };
    const backend = await loadLlamaBackend(1);
    const model: LlamaModel = await backend.llama.loadModel({ modelPath: demoBasePath(), vocabOnly: true });
    try {
      for (const [method, lines] of [
        ["sft", sft],
        ["dpo", dpo],
        ["grpo", groups],
      ] as const) {
        const path = join(dir, `${method}.jsonl`);
        writeFileSync(path, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
        const tokenized = await formatDataset(model, await readDatasetFile(path), null, {
          domain: "agent",
          method,
          maxLength: 4096,
          maxLengthPolicy: "drop",
          trainOut: join(dir, `${method}.tok.jsonl`),
          heldoutOut: join(dir, `${method}.heldout.tok.jsonl`),
          toolFormat: manifest.toolCallFormat as never,
        });
        // Every line made it, each call laid out with its result, no result learned.
        expect(tokenized.dataset.toolCalls, method).toMatchObject({
          examples: tasks.length,
          calls: 2 * tasks.length,
          unmaskedResults: 0,
          badTools: 0,
        });
      }
    } finally {
      await model.dispose();
    }
    // GRPO on the groups with the real trainer, from the shipped Agent: one step.
    const trained = await trainAdapter(
      {
        base: demoBasePath(),
        data: join(dir, "grpo.jsonl"),
        out: join(dir, "trained"),
        id: "agent",
        method: "grpo",
        from: join(demoAdaptersDir(), "agent.gguf"),
        steps: 1,
        threads: 1,
        device: "cpu",
        seed: 0,
      },
      () => undefined,
    );
    expect(trained.manifest.lineage.method).toBe("grpo");
    expect(trained.dataset.toolCalls).toMatchObject({ unmaskedResults: 0, badTools: 0 });
    expect(trained.report.data.tokens).toBeGreaterThan(0);
  }, 300_000);
});
