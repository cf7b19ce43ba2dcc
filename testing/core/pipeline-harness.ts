/**
 * One TurnPipeline for a test: a database (in memory unless a path is given), the conversation and
 * message stores, the scripted FakeEngine behind the EngineQueue core puts in front of every
 * engine, an event bus with a recorder, and the pipeline. The pipeline and the database are closed
 * when the test finishes (vitest's onTestFinished), so call it inside a test.
 */
import type { Database } from "better-sqlite3";
import { onTestFinished } from "vitest";
import { TurnPipeline, type TurnPipelineDeps } from "../../electron/core/chat/turn-pipeline";
import { chatStorage } from "../../electron/core/chat/chat-storage";
import { ConversationStore } from "../../electron/core/conversations/conversation-store";
import { MessageStore } from "../../electron/core/conversations/message-store";
import { openDatabase } from "../../electron/core/db/database";
import { EventBus } from "../../electron/core/events/event-bus";
import { EngineQueue } from "../../electron/core/models/engine-queue";
import { FakeEngine, loadedModel } from "../engine/fake-engine";
import { EventRecorder } from "./events";

export interface PipelineHarness {
  db: Database;
  conversations: ConversationStore;
  messages: MessageStore;
  /** The scripted engine behind the queue; a model (context 512) is loaded. */
  engine: FakeEngine;
  bus: EventBus;
  events: EventRecorder;
  pipeline: TurnPipeline;
}

export interface PipelineHarnessOptions {
  /** The database file; ":memory:" by default. */
  path?: string;
  /** Pipeline dependencies beyond the database, stores, engine and bus (system prompt, flush interval…). */
  deps?: Partial<TurnPipelineDeps>;
}

export function pipelineHarness({
  path = ":memory:",
  deps = {},
}: PipelineHarnessOptions = {}): PipelineHarness {
  const db = openDatabase(path);
  onTestFinished(() => void db.close());
  const conversations = new ConversationStore(db);
  const messages = new MessageStore(db);
  const engine = new FakeEngine();
  engine.loaded = loadedModel("/models/m.gguf");
  const bus = new EventBus();
  const events = new EventRecorder((l) => bus.subscribe(l));
  const pipeline = new TurnPipeline({
    storage: chatStorage(db),
    conversations,
    messages,
    engine: new EngineQueue(engine),
    events: bus,
    ...deps,
  });
  // Registered last, run first: the pipeline closes (saving running answers) before the database.
  onTestFinished(() => pipeline.close());
  return { db, conversations, messages, engine, bus, events, pipeline };
}
