/**
 * The UI's actions: it owns the store, the API client's subscriptions and the timers, and
 * turns user intents and pushed events into store updates. One instance per app; dispose()
 * releases everything (no module-level state).
 *
 * Start-up, reconnects and event routing live here; the work is done by the feature controllers
 * it composes, each beside its feature's components (renderer/src/<feature>/). Components call
 * the controller they need directly (app/controller-context.tsx has a hook per controller);
 * those sharing the app store (chat, conversations, deletes, models, genui) get it here.
 */
import { ApiError } from "../../../electron/api";
import { errorMessage } from "../api";
import type { RendererApi } from "../api";
import { AdapterController } from "../adapters/adapter-controller";
import { createAppStore } from "./app-store";
import type { AppState, AppStore } from "./app-store";
import { ChatController } from "../chat/chat-controller";
import { sortConversations } from "../chat/chat-logic";
import { ConversationController } from "../conversations/conversation-controller";
import { DatabaseController, isDatabaseUnavailable } from "../database/database-controller";
import { DeleteController } from "../conversations/delete-controller";
import { EngineBuildController } from "../settings/engine-build-controller";
import { HubController } from "../models/hub-controller";
import { LocalModelsController } from "../models/local-models-controller";
import { LocalServerController } from "../settings/local-server-controller";
import { McpController } from "../settings/mcp-controller";
import type { Schedule } from "../chat/frame-batcher";
import { FeedbackController } from "../chat/feedback-controller";
import { GenuiController } from "../genui/genui-controller";
import { MemoryController } from "../memory/memory-controller";
import { ModelController } from "../models/model-controller";
import { PrivacyController } from "../privacy/privacy-controller";
import { ReleaseController } from "../adapters/release-controller";
import { SettingsController } from "../settings/settings-controller";
import { TransferController } from "../conversations/transfer-controller";
import { UpdateController } from "../settings/update-controller";

export { UNDO_DELETE_MS } from "../conversations/delete-controller";

/** How long a notice in the toast area stays before it dismisses itself (Dismiss is at hand). */
export const NOTICE_MS = 10_000;

export class AppController {
  readonly store: AppStore;
  /** Installed adapters and the Adapters panel. */
  readonly adapters: AdapterController;
  readonly settings: SettingsController;
  /** Ratings, corrections and copies of answers. */
  readonly feedback: FeedbackController;
  readonly privacy: PrivacyController;
  readonly memory: MemoryController;
  /** The database screen (corrupt or newer database). */
  readonly database: DatabaseController;
  readonly transfer: TransferController;
  /** Adapter versions, the evaluation gate, releases and their notices. */
  readonly releases: ReleaseController;
  /** Registry updates of adapters (Settings). */
  readonly updates: UpdateController;
  /** The model hub: search, repo files, fit estimates, downloads, the access token. */
  readonly hub: HubController;
  /** The models on this machine and the load settings dialog. */
  readonly localModels: LocalModelsController;
  /** Building llama.cpp for this machine (Settings). */
  readonly engineBuild: EngineBuildController;
  /** MCP servers and the tools the Agent may call (Settings, "Tools & MCP servers"). */
  readonly mcp: McpController;
  readonly localServer: LocalServerController;
  /** Sending, streaming, stopping and regenerating answers; tool permission prompts. */
  readonly chat: ChatController;
  /** Opening, renaming and searching conversations; a conversation's adapter choice. */
  readonly conversations: ConversationController;
  /** Deleting conversations with Undo. */
  readonly deletes: DeleteController;
  /** The loaded model: opening a file or the demo, the model panel. */
  readonly models: ModelController;
  /** Interactions with UI-mode answers (genui.interact). */
  readonly genui: GenuiController;
  private readonly disposers: Array<() => void> = [];
  private started = false;

  constructor(
    readonly api: RendererApi,
    schedule?: Schedule,
  ) {
    this.store = createAppStore(api.connection?.state ?? "open");
    this.adapters = new AdapterController(api);
    this.settings = new SettingsController(api);
    this.feedback = new FeedbackController(api, {
      get: (id) => this.chat.get(id),
      put: (message) => this.chat.put(message),
    });
    this.privacy = new PrivacyController(api);
    this.memory = new MemoryController(api);
    this.database = new DatabaseController(api, () => this.start(null));
    this.transfer = new TransferController(api, (notice) => this.set({ notice }));
    this.releases = new ReleaseController(
      api,
      (id) => this.adapters.store.getState().adapters?.find((a) => a.id === id)?.name ?? id,
    );
    this.updates = new UpdateController(api);
    this.chat = new ChatController(api, this.store, schedule);
    this.conversations = new ConversationController(api, this.store);
    this.deletes = new DeleteController(api, this.store, (id) => this.conversations.forget(id));
    this.models = new ModelController(api, this.store);
    this.genui = new GenuiController(api, this.store);
    this.localModels = new LocalModelsController(api, async (path, settings) => {
      const ok = await this.models.open(path, settings);
      return { ok, error: ok ? null : this.store.getState().modelError };
    });
    this.hub = new HubController(api, () => void this.localModels.refresh());
    this.engineBuild = new EngineBuildController(api);
    this.mcp = new McpController(api);
    this.localServer = new LocalServerController(api);
  }

  /** Subscribe to events, then load the engine status, the conversation list and `initialId`. */
  async start(initialId: string | null): Promise<void> {
    if (!this.started) {
      this.started = true;
      this.subscribe();
    }
    this.set({ currentId: initialId, phase: "loading", loadError: null });
    if (!(await this.database.check())) {
      this.set({ phase: "database" });
      return;
    }
    try {
      const [engine, conversations] = await this.fetchStatusAndList();
      this.set({ engine, conversations: sortConversations(conversations), phase: "loaded" });
    } catch (error) {
      // The database broke between the check and the list: show its screen, not a dead end.
      if (isSignedOut(error)) this.set({ phase: "signedOut", loadError: errorMessage(error) });
      else if (isDatabaseUnavailable(error) && !(await this.database.check()))
        this.set({ phase: "database" });
      else this.set({ phase: "error", loadError: errorMessage(error) });
      return;
    }
    // Not part of readiness: chat works without adapters (the list shows its own error), and
    // the first screen offers downloaded models and running downloads once they are listed.
    void this.adapters.refresh();
    void this.localModels.refresh();
    void this.hub.refreshDownloads();
    void this.hub.loadRecommended();
    if (initialId) await this.conversations.loadDetail(initialId);
  }

  dispose(): void {
    for (const dispose of this.disposers.splice(0)) dispose();
    this.deletes.dispose();
    this.chat.dispose();
    this.adapters.dispose();
    this.privacy.dispose();
    this.memory.dispose();
    this.releases.dispose();
    this.updates.dispose();
    this.hub.dispose();
    this.localModels.dispose();
    this.engineBuild.dispose();
    this.mcp.dispose();
    this.localServer.dispose();
  }

  /** The toast area's message (a failed delete, rename, import, ...) is app-wide: dismissed here. */
  dismissNotice(): void {
    this.set({ notice: null });
  }

  /** Open the Models dialog (hub search or the models on this machine). */
  openModels(tab: "find" | "local" = "find"): void {
    this.hub.setOpen(true, tab);
    void this.localModels.refresh();
  }

  private fetchStatusAndList() {
    return Promise.all([this.api.call("models.status", {}), this.api.call("conversations.list", {})]);
  }

  /** After the event channel comes back, fetch what may have been missed while it was down. */
  private async resync(): Promise<void> {
    if (this.store.getState().phase !== "loaded") {
      await this.start(this.store.getState().currentId);
      return;
    }
    try {
      const [engine, conversations] = await this.fetchStatusAndList();
      this.set({ engine, conversations: sortConversations(conversations) });
      void this.adapters.refresh();
    } catch (error) {
      // The server came back without this browser's session (a restart with a new key).
      if (isSignedOut(error)) this.set({ phase: "signedOut", loadError: errorMessage(error) });
      return; // The banner already says the connection is unstable; the next reconnect retries.
    }
    const { currentId } = this.store.getState();
    if (currentId) await this.conversations.loadDetail(currentId);
  }

  /** A notice ("Imported 1 conversation", a failed rename) goes by itself after NOTICE_MS. */
  private watchNotice(): void {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const clear = () => {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    };
    const unsubscribe = this.store.subscribe((state, previous) => {
      if (state.notice === previous.notice) return;
      clear();
      const shown = state.notice;
      if (shown === null) return;
      timer = setTimeout(() => {
        timer = null;
        if (this.store.getState().notice === shown) this.set({ notice: null });
      }, NOTICE_MS);
    });
    this.disposers.push(() => {
      unsubscribe();
      clear();
    });
  }

  private subscribe(): void {
    const { api } = this;
    this.watchNotice();
    this.disposers.push(
      api.on("chat.delta", (delta) => this.chat.onDelta(delta)),
      api.on("chat.done", ({ message }) => this.chat.onDone(message)),
      api.on("chat.toolStep", (payload) => this.chat.onToolStep(payload)),
      api.on("engine.status", (engine) => this.set({ engine })),
      api.on("conversations.changed", ({ conversation, deletedId }) => {
        if (conversation) this.conversations.apply(conversation);
        if (deletedId) this.conversations.forget(deletedId);
      }),
    );
    const connection = api.connection;
    if (connection) {
      this.disposers.push(
        connection.onChange((state) => {
          const previous = this.store.getState().connection;
          this.set({ connection: state });
          if (state === "open" && previous === "reconnecting") void this.resync();
        }),
      );
    }
  }

  private set(patch: Partial<AppState>): void {
    this.store.setState(patch);
  }
}

/** The server answered 401: this browser has no session there (not a failure Retry can mend). */
export function isSignedOut(error: unknown): boolean {
  return error instanceof ApiError && error.code === "unauthorized";
}
