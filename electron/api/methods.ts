/**
 * The method map: one entry per call the UI can make, with input and output schemas.
 * Transports (IPC, HTTP) and the preload are generated from this object.
 */
import { z } from "zod";
import {
  AdapterInfo,
  AdapterSelection,
  AppSettings,
  Conversation,
  ConversationDetail,
  ConversationSettings,
  DatabaseStatus,
  Memory,
  PrivacyState,
  SearchHit,
  SharingLevel,
  SyncStatus,
  EngineStatus,
  Id,
  Message,
  ModelInfo,
  SamplingPreset,
  SamplingSettings,
  LocalServerPort,
  LocalServerStatus,
  CorsOrigins,
} from "./schemas";
import { AdapterVersionInfo, Release, UpdateCheck, UpdateSettings } from "./releases";
import { InteractionOutcome, InteractionValues } from "./genui/interaction";
import {
  Download,
  EngineBuild,
  FitEstimate,
  HubAdapterMatch,
  HubModel,
  HubRepo,
  LoadSettings,
  LocalModel,
  ModelProfile,
  RecommendedModel,
  RepoId,
  RepoPath,
} from "./hub";
import { McpServerName, McpServerSpec, McpServerStatus, ToolDecision, ToolInfo, ToolStep } from "./tools";

/**
 * The longest file conversations.import takes, in characters (UTF-16 code units, as zod
 * counts). The HTTP route's body limit is derived from it (electron/server/api-routes.ts).
 */
export const IMPORT_JSON_MAX_CHARS = 50_000_000;

const Empty = z.object({}).strict();

export const methods = {
  "models.status": { input: Empty, output: EngineStatus },
  /** Read a GGUF file's metadata without loading it; refuses non-models with a clear error. */
  "models.inspect": { input: z.object({ path: z.string().min(1).max(4096) }).strict(), output: ModelInfo },
  /** Load a model from a path on the machine that runs core. Resolves when loaded. */
  "models.open": {
    input: z
      .object({
        path: z.string().min(1).max(4096),
        /** Load with these settings (and remember them for this model); absent: the remembered or default ones. */
        settings: LoadSettings.optional(),
      })
      .strict(),
    output: EngineStatus,
  },
  /** Models in the data folder's models/ (downloaded in-app or put there), newest first. */
  "models.local": { input: Empty, output: z.array(LocalModel) },
  /** Delete a model file (every part of a split GGUF) from the data folder's models/; refuses the loaded one. */
  "models.delete": {
    input: z.object({ path: z.string().min(1).max(4096) }).strict(),
    output: z.object({ deleted: z.boolean() }),
  },
  /** Memory estimate for a model file on this machine (node-llama-cpp's GgufInsights). */
  "models.fit": {
    input: z
      .object({
        path: z.string().min(1).max(4096),
        contextSize: z.number().int().min(256).max(1_048_576).optional(),
        gpuLayers: LoadSettings.shape.gpuLayers.optional(),
      })
      .strict(),
    output: FitEstimate,
  },
  /** The settings a model loads with: remembered ones, else its profile's or the fit estimate's defaults. */
  "models.loadSettings": {
    input: z.object({ path: z.string().min(1).max(4096) }).strict(),
    output: z.object({ settings: LoadSettings, remembered: z.boolean(), profile: ModelProfile.nullable() }),
  },
  "models.setLoadSettings": {
    input: z.object({ path: z.string().min(1).max(4096), settings: LoadSettings }).strict(),
    output: LoadSettings,
  },

  /** Search the model hub (Hugging Face or HF_ENDPOINT) for GGUF repos. */
  "hub.search": {
    input: z
      .object({ query: z.string().max(200), limit: z.number().int().min(1).max(100).optional() })
      .strict(),
    output: z.array(HubModel),
  },
  /** The curated first-run list: small, medium, large and the Tall base's family. */
  "hub.recommended": { input: Empty, output: z.array(RecommendedModel) },
  /** A repo's GGUF files with quantization, size, parts and LFS sha256. */
  "hub.repo": { input: z.object({ repo: RepoId }).strict(), output: HubRepo },
  /** Fit estimate for a hub file before downloading it (reads only the file's GGUF header). */
  "hub.fit": {
    input: z
      .object({
        repo: RepoId,
        file: RepoPath,
        contextSize: z.number().int().min(256).max(1_048_576).optional(),
        gpuLayers: LoadSettings.shape.gpuLayers.optional(),
      })
      .strict(),
    output: FitEstimate,
  },
  /** Start downloading a model (all parts) into the data folder's models/; progress arrives as `hub.download` events. */
  "hub.download": { input: z.object({ repo: RepoId, file: RepoPath }).strict(), output: Download },
  "hub.downloads": { input: Empty, output: z.array(Download) },
  "hub.pause": { input: z.object({ id: z.string().min(1).max(200) }).strict(), output: Download },
  "hub.resume": { input: z.object({ id: z.string().min(1).max(200) }).strict(), output: Download },
  /** Keep an `unverified` download (the hub lists no sha256 for it): the user's explicit decision. */
  "hub.acceptUnverified": { input: z.object({ id: z.string().min(1).max(200) }).strict(), output: Download },
  /** Cancel a download and delete its partial file. */
  "hub.cancel": { input: z.object({ id: z.string().min(1).max(200) }).strict(), output: Download },
  /** Whether a hub access token is stored (never the token itself). */
  "hub.tokenStatus": {
    input: Empty,
    output: z.object({ set: z.boolean(), storage: z.enum(["safeStorage", "file"]) }),
  },
  /** Store (or with null, delete) the access token for gated repos; kept only on this machine. */
  "hub.setToken": {
    input: z.object({ token: z.string().min(1).max(500).nullable() }).strict(),
    output: z.object({ set: z.boolean(), storage: z.enum(["safeStorage", "file"]) }),
  },
  /**
   * LoRA adapters on the hub made for the loaded base (hub metadata, then each file's own header:
   * a GGUF's architecture and shapes, a PEFT folder's config and safetensors header).
   */
  "hub.adaptersForBase": {
    input: z.object({ query: z.string().max(200).optional() }).strict(),
    output: z.array(HubAdapterMatch),
  },
  /**
   * Download an adapter and install it with the same validation as adapters.install: a GGUF
   * file, or a PEFT folder (`file` its adapter_model.safetensors), converted for the loaded base.
   */
  "hub.installAdapter": { input: z.object({ repo: RepoId, file: RepoPath }).strict(), output: AdapterInfo },

  /** Which llama.cpp binaries the engine runs, and the build for this machine's state. */
  "engine.buildStatus": { input: Empty, output: EngineBuild },
  /** Build llama.cpp from node-llama-cpp's bundled source for this CPU (and GPU toolkit); progress as `engine.build` events. */
  "engine.build": { input: Empty, output: EngineBuild },
  /** Go back to the prebuilt binaries (deletes the local build). */
  "engine.usePrebuilt": { input: Empty, output: EngineBuild },
  /** Generate (if needed) and load the tiny built-in demo model. */
  "models.openDemo": { input: Empty, output: EngineStatus },
  /** Free the loaded model (memory back to the system); the next start opens none. */
  "models.unload": { input: Empty, output: EngineStatus },

  "conversations.list": {
    input: z.object({ query: z.string().max(500).optional() }).strict(),
    output: z.array(Conversation),
  },
  "conversations.create": {
    input: z.object({ title: z.string().max(200).optional() }).strict(),
    output: Conversation,
  },
  "conversations.get": { input: z.object({ id: Id }).strict(), output: ConversationDetail },
  "conversations.rename": {
    input: z.object({ id: Id, title: z.string().min(1).max(200) }).strict(),
    output: Conversation,
  },
  /** Delete a conversation; `deleteMemories` also deletes the memories that came from it. */
  "conversations.delete": {
    input: z.object({ id: Id, deleteMemories: z.boolean().optional() }).strict(),
    output: z.object({ deleted: z.boolean() }),
  },
  /** Full-text search over every conversation (titles and messages), best matches first. */
  "conversations.search": {
    input: z
      .object({ query: z.string().min(1).max(500), limit: z.number().int().min(1).max(200).optional() })
      .strict(),
    output: z.array(SearchHit),
  },
  /** One conversation (or everything, without `id`) as a JSON document to save. */
  "conversations.export": {
    input: z.object({ id: Id.optional() }).strict(),
    output: z.object({ fileName: z.string(), json: z.string() }),
  },
  /** Import a file made by export. Untrusted input: validated whole before anything is written. */
  "conversations.import": {
    input: z.object({ json: z.string().min(2).max(IMPORT_JSON_MAX_CHARS) }).strict(),
    output: z.object({
      conversations: z.number().int(),
      messages: z.number().int(),
      memories: z.number().int(),
    }),
  },

  "memories.list": { input: Empty, output: z.array(Memory) },
  "memories.create": { input: z.object({ text: z.string().min(1).max(2000) }).strict(), output: Memory },
  /** Edit a memory's text, or accept a proposed one (status "active"). */
  "memories.update": {
    input: z
      .object({
        id: Id,
        text: z.string().min(1).max(2000).optional(),
        status: z.literal("active").optional(),
      })
      .strict(),
    output: Memory,
  },
  "memories.delete": { input: z.object({ id: Id }).strict(), output: z.object({ deleted: z.boolean() }) },

  /** "Good response" / "Bad response" on an answer, with an optional reason. */
  "feedback.rate": {
    input: z
      .object({ messageId: Id, rating: z.enum(["good", "bad"]), reason: z.string().max(2000).optional() })
      .strict(),
    output: Message,
  },
  /** The user's edit of an answer into what it should have been: stored as a correction. */
  "feedback.correct": {
    input: z.object({ messageId: Id, text: z.string().min(1).max(100_000) }).strict(),
    output: Message,
  },
  /** The user copied an answer (a weak positive signal). */
  "feedback.copied": {
    input: z.object({ messageId: Id }).strict(),
    output: z.object({ recorded: z.boolean() }),
  },

  "privacy.get": { input: Empty, output: PrivacyState },
  /** Change the sharing level or endpoint. Turning sharing off stops uploads and empties the queue. */
  "privacy.update": {
    input: z.object({ sharing: SharingLevel.optional(), endpoint: z.string().max(2000).optional() }).strict(),
    output: z.object({ privacy: PrivacyState, purged: z.number().int() }),
  },
  /** Exactly the next batch that would be sent, after redaction (wire items). */
  "privacy.preview": {
    input: Empty,
    output: z.object({ items: z.array(z.record(z.string(), z.unknown())), bytes: z.number().int() }),
  },
  "privacy.syncNow": { input: Empty, output: SyncStatus },
  /** Ask the feedback service to delete everything tied to this install's random id. */
  "privacy.deleteUploaded": { input: Empty, output: z.object({ deletedItems: z.number().int() }) },

  "database.status": { input: Empty, output: DatabaseStatus },
  /** Replace a corrupt database with a backup (the bad file is kept beside it). */
  "database.restoreBackup": {
    input: z.object({ id: z.string().min(1).max(200) }).strict(),
    output: DatabaseStatus,
  },
  /** Move the bad database aside (kept) and start with an empty one. */
  "database.startFresh": { input: Empty, output: DatabaseStatus },

  /**
   * Commit the user message, then start generating. Returns at once with both messages;
   * tokens arrive as `chat.delta` events and the end as `chat.done`.
   */
  "chat.send": {
    input: z
      .object({
        conversationId: Id,
        text: z.string().min(1).max(100_000),
        adapters: AdapterSelection.optional(),
        sampling: SamplingSettings.optional(),
        /** "ui": answer with generated components (GenUI); "text": never; absent: the router's "ui" adapter decides. */
        format: z.enum(["text", "ui"]).optional(),
      })
      .strict(),
    output: z.object({ userMessage: Message, assistantMessage: Message }),
  },
  /**
   * The user used a component of a UI answer: submitted a form, pressed a button, chose an
   * option, sorted a table, or left a form half-filled (action "abandon"). Checked against the
   * component, stored, recorded as feedback; a submit, click or choice also becomes a user turn
   * (Message.interaction) that the model answers, returned like chat.send's messages.
   */
  "genui.interact": {
    input: z
      .object({
        conversationId: Id,
        messageId: Id,
        componentId: z.string().min(1).max(64),
        action: z.string().min(1).max(64),
        values: InteractionValues.optional(),
      })
      .strict(),
    output: z.object({
      outcome: InteractionOutcome,
      userMessage: Message.nullable(),
      assistantMessage: Message.nullable(),
    }),
  },
  /** The component catalog: its version and JSON Schema (what UI answers may contain). */
  "genui.catalog": {
    input: Empty,
    output: z.object({ version: z.number().int(), jsonSchema: z.record(z.string(), z.unknown()) }),
  },
  /**
   * "Answer again": generate a new answer to the last user message, optionally with other
   * adapters ("answer again with Coding"). The previous answer is kept in the database but
   * leaves the transcript; an explicit adapter choice teaches the router.
   */
  "chat.regenerate": {
    input: z
      .object({
        conversationId: Id,
        adapters: AdapterSelection.optional(),
        /** "text": answer as text ("Answer as text" under a UI answer that failed to show); absent: as before. */
        format: z.enum(["text", "ui"]).optional(),
      })
      .strict(),
    output: z.object({ assistantMessage: Message }),
  },
  /**
   * Edit and resend a question: `text` becomes a new version of the user message `messageId`
   * (shown in its place; the old one and what followed it stay as an earlier branch), answered
   * like chat.send (returns at once, tokens as `chat.delta`, the end as `chat.done`).
   */
  "chat.edit": {
    input: z
      .object({
        conversationId: Id,
        messageId: Id,
        text: z.string().min(1).max(100_000),
        adapters: AdapterSelection.optional(),
        sampling: SamplingSettings.optional(),
      })
      .strict(),
    output: z.object({ userMessage: Message, assistantMessage: Message }),
  },
  /**
   * Show another version of a message (Message.versions): its branch becomes the transcript,
   * below it the versions shown there last. Returns the transcript; busy while generating.
   */
  "chat.showVersion": {
    input: z.object({ messageId: Id }).strict(),
    output: z.object({ messages: z.array(Message) }),
  },
  /**
   * How many tokens `text` (a message with its attachments, before sending) takes: by the loaded
   * model's tokenizer, or estimated when no model is loaded (`source`). `room`: the most one
   * message may take in the prompt (the context less the answer's room and the safety margin).
   */
  "chat.countTokens": {
    input: z.object({ text: z.string().max(400_000) }).strict(),
    output: z.object({
      tokens: z.number().int().nonnegative(),
      source: z.enum(["tokenizer", "estimate"]),
      room: z.number().int().nonnegative(),
      contextSize: z.number().int().positive(),
    }),
  },
  /**
   * The user's answer to a tool call waiting for permission (a "pending" step, see the
   * `chat.toolStep` event): allow once, always (for this tool in this conversation), or deny.
   */
  "chat.decideTool": {
    input: z
      .object({ conversationId: Id, stepId: z.string().min(1).max(100), decision: ToolDecision })
      .strict(),
    output: ToolStep,
  },

  /** Every tool the Agent can call: built-in and from each MCP server, with its on/off state. */
  "tools.list": { input: Empty, output: z.array(ToolInfo) },
  /** Turn one tool on or off (remembered). */
  "tools.setEnabled": {
    input: z
      .object({ server: z.string().min(1).max(64), name: z.string().min(1).max(200), enabled: z.boolean() })
      .strict(),
    output: ToolInfo,
  },
  /** The MCP servers the user added, with their state and tools. */
  "mcp.list": { input: Empty, output: z.array(McpServerStatus) },
  /** Add a server (saved, then started) under a new name. */
  "mcp.add": {
    input: z.object({ name: McpServerName, spec: McpServerSpec }).strict(),
    output: McpServerStatus,
  },
  /**
   * Add the servers of an `mcpServers` JSON file (as other apps write it). Each server is
   * checked on its own: a bad entry is reported and the others are added.
   */
  "mcp.import": {
    input: z.object({ json: z.string().min(1).max(1_000_000) }).strict(),
    output: z.object({
      added: z.array(McpServerStatus),
      errors: z.array(z.object({ name: z.string(), message: z.string() })),
    }),
  },
  /** Stop a server and forget it. */
  "mcp.remove": {
    input: z.object({ name: McpServerName }).strict(),
    output: z.object({ removed: z.boolean() }),
  },
  /** Stop and start a server again (after a crash or a config change on disk). */
  "mcp.restart": { input: z.object({ name: McpServerName }).strict(), output: McpServerStatus },
  /** A server's recent stderr lines and connection events, oldest first. */
  "mcp.logs": {
    input: z.object({ name: McpServerName }).strict(),
    output: z.object({ lines: z.array(z.string()) }),
  },

  /** Stop the generation running in a conversation; the partial answer is kept as "stopped". */
  "chat.stop": {
    input: z.object({ conversationId: Id }).strict(),
    output: z.object({ stopped: z.boolean() }),
  },

  /** Pin an adapter or a blend for a conversation ("auto" to let the router decide again). */
  "conversations.setAdapters": {
    input: z.object({ id: Id, adapters: AdapterSelection }).strict(),
    output: Conversation,
  },
  /** The conversation's own system prompt (null: the app's) and sampling (issue 13). */
  "conversations.getSettings": { input: z.object({ id: Id }).strict(), output: ConversationSettings },
  /**
   * Replace them; every later turn of the conversation uses them. Out-of-range values are refused
   * (invalid_input naming the field), max tokens also above the loaded model's context.
   */
  "conversations.setSettings": {
    input: ConversationSettings.extend({ id: Id }).strict(),
    output: ConversationSettings,
  },
  /** Named settings, by name. */
  "presets.list": { input: Empty, output: z.array(SamplingPreset) },
  /** Save settings under a name; an existing preset of that name (any case) is replaced. */
  "presets.save": {
    input: ConversationSettings.extend({ name: SamplingPreset.shape.name }).strict(),
    output: SamplingPreset,
  },
  "presets.delete": { input: z.object({ id: Id }).strict(), output: z.object({ deleted: z.boolean() }) },

  "adapters.list": { input: Empty, output: z.array(AdapterInfo) },
  /**
   * Validate (GGUF, architecture, every tensor shape against the base) and install a LoRA file,
   * or a Hugging Face PEFT LoRA folder (adapter_config.json + adapter_model.safetensors), which is
   * converted for the loaded base first (native/gguf/peft-lora.ts).
   */
  "adapters.install": {
    input: z.object({ path: z.string().min(1).max(4096) }).strict(),
    output: AdapterInfo,
  },
  "adapters.update": {
    input: z
      .object({ id: Id, enabled: z.boolean().optional(), scale: z.number().min(0).max(2).optional() })
      .strict(),
    output: AdapterInfo,
  },
  "adapters.remove": { input: z.object({ id: Id }).strict(), output: z.object({ removed: z.boolean() }) },
  /** Answer one test prompt with the base alone and with the adapter, for a side-by-side view. */
  "adapters.compare": {
    input: z
      .object({
        adapterId: Id,
        prompt: z.string().min(1).max(4000),
        maxTokens: z.number().int().min(1).max(512).optional(),
      })
      .strict(),
    output: z.object({ base: z.string(), adapter: z.string() }),
  },

  /** Every known version of an adapter (newest first): status, lineage, contract results, live flag. */
  "adapters.versions": { input: z.object({ id: Id }).strict(), output: z.array(AdapterVersionInfo) },
  /**
   * Stage a new version of an installed adapter from a file (validated like an install) and
   * put it through the evaluation gate in the background (`adapters.gate` events).
   */
  "adapters.installVersion": {
    input: z.object({ path: z.string().min(1).max(4096) }).strict(),
    output: AdapterVersionInfo,
  },
  /** Run the gate on a staged (or rejected) version now; live when it passes. Resolves when decided. */
  "adapters.promote": {
    input: z.object({ id: Id, version: z.string().min(1).max(64) }).strict(),
    output: AdapterVersionInfo,
  },
  /** Make a previous (retired) version live again at once: no gate, its file was kept. */
  "adapters.rollback": {
    input: z.object({ id: Id, version: z.string().min(1).max(64) }).strict(),
    output: AdapterVersionInfo,
  },
  /** Delete the kept files of retired and rejected versions (no rollback to them afterwards). */
  "adapters.prune": {
    input: z.object({ id: Id }).strict(),
    output: z.object({ deletedFiles: z.number().int(), freedBytes: z.number().int() }),
  },
  /** Ask the registry for newer versions; `wait` resolves only once they are downloaded and gated. */
  "adapters.checkUpdates": {
    input: z.object({ wait: z.boolean().optional() }).strict(),
    output: UpdateCheck,
  },
  "updates.get": { input: Empty, output: UpdateSettings },
  "updates.configure": {
    input: z
      .object({
        autoUpdate: z.boolean().optional(),
        registryUrl: z.string().max(2000).nullable().optional(),
        intervalMinutes: z.number().min(1).max(10_080).optional(),
      })
      .strict(),
    output: UpdateSettings,
  },
  /** The release history, newest first. */
  "releases.list": {
    input: z.object({ limit: z.number().int().min(1).max(1000).optional() }).strict(),
    output: z.array(Release),
  },
  /** The release that produced an assistant message (null for turns older than releases). */
  "releases.forMessage": { input: z.object({ messageId: Id }).strict(), output: Release.nullable() },

  "settings.get": { input: Empty, output: AppSettings },
  "settings.update": { input: AppSettings.partial().strict(), output: AppSettings },

  /** The local API server: on or off, its port, address and key, and why it is not running. */
  "localServer.status": { input: Empty, output: LocalServerStatus },
  /**
   * Turn it on or off, move it to another port, or set the origins whose pages may call it
   * (CORS); a running server restarts with the change. Remembered.
   */
  "localServer.configure": {
    input: z
      .object({
        enabled: z.boolean().optional(),
        port: LocalServerPort.optional(),
        corsOrigins: CorsOrigins.optional(),
      })
      .strict(),
    output: LocalServerStatus,
  },
  /** A new key; the old one stops working at once (a running server restarts with the new one). */
  "localServer.regenerateKey": { input: Empty, output: LocalServerStatus },
} as const;

export type Methods = typeof methods;
export type MethodName = keyof Methods;
export type MethodInput<M extends MethodName> = z.input<Methods[M]["input"]>;
export type MethodOutput<M extends MethodName> = z.output<Methods[M]["output"]>;

export const methodNames = Object.keys(methods) as MethodName[];

export function isMethodName(name: unknown): name is MethodName {
  return typeof name === "string" && Object.prototype.hasOwnProperty.call(methods, name);
}
