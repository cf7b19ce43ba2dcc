import { createContext, useContext } from "react";
import type { ReactNode } from "react";
import { useStore } from "zustand";
import type { AppController } from "../state/app-controller";
import type { AdapterController, AdapterState } from "../adapters/adapter-controller";
import type { SettingsController, SettingsState } from "../settings/settings-controller";
import type { FeedbackController, FeedbackState } from "../chat/feedback-controller";
import type { PrivacyController, PrivacyViewState } from "../privacy/privacy-controller";
import type { MemoryController, MemoryState } from "../memory/memory-controller";
import type { DatabaseController, DatabaseViewState } from "../database/database-controller";
import type { TransferController } from "../conversations/transfer-controller";
import type { ReleaseController, ReleaseState } from "../adapters/release-controller";
import type { UpdateController, UpdateState } from "../settings/update-controller";
import type { HubController, HubState } from "../models/hub-controller";
import type { LocalModelsController, LocalModelsState } from "../models/local-models-controller";
import type { EngineBuildController, EngineBuildState } from "../settings/engine-build-controller";
import type { McpController, McpState } from "../settings/mcp-controller";
import type { LocalServerController, LocalServerState } from "../settings/local-server-controller";
import type { ChatController } from "../chat/chat-controller";
import type { ConversationController } from "../conversations/conversation-controller";
import type { DeleteController } from "../conversations/delete-controller";
import type { GenuiController } from "../genui/genui-controller";
import type { ModelController } from "../models/model-controller";
import type { AppState } from "../state/app-store";

const ControllerContext = createContext<AppController | null>(null);

export function ControllerProvider({
  controller,
  children,
}: {
  controller: AppController;
  children: ReactNode;
}) {
  return <ControllerContext.Provider value={controller}>{children}</ControllerContext.Provider>;
}

export function useController(): AppController {
  const controller = useContext(ControllerContext);
  if (!controller) throw new Error("useController needs a ControllerProvider above it");
  return controller;
}

/** Sending, stopping and regenerating answers; tool permission prompts. */
export function useChatController(): ChatController {
  return useController().chat;
}

/** Opening, renaming and searching conversations; a conversation's adapter choice. */
export function useConversationController(): ConversationController {
  return useController().conversations;
}

/** Deleting conversations with Undo. */
export function useDeleteController(): DeleteController {
  return useController().deletes;
}

/** The loaded model: opening a file or the demo, the model panel. */
export function useModelController(): ModelController {
  return useController().models;
}

/** Interactions with UI-mode answers. */
export function useGenuiController(): GenuiController {
  return useController().genui;
}

export function useAdapterController(): AdapterController {
  return useController().adapters;
}

export function useSettingsController(): SettingsController {
  return useController().settings;
}

export function useFeedbackController(): FeedbackController {
  return useController().feedback;
}

export function usePrivacyController(): PrivacyController {
  return useController().privacy;
}

export function useMemoryController(): MemoryController {
  return useController().memory;
}

export function useDatabaseController(): DatabaseController {
  return useController().database;
}

export function useTransferController(): TransferController {
  return useController().transfer;
}

export function useReleaseController(): ReleaseController {
  return useController().releases;
}

export function useUpdateController(): UpdateController {
  return useController().updates;
}

export function useHubController(): HubController {
  return useController().hub;
}

export function useLocalModelsController(): LocalModelsController {
  return useController().localModels;
}

export function useEngineBuildController(): EngineBuildController {
  return useController().engineBuild;
}

export function useMcpController(): McpController {
  return useController().mcp;
}

export function useLocalServerController(): LocalServerController {
  return useController().localServer;
}

/** Select from the app store; the selector must return stable references (no new arrays). */
export function useAppState<T>(selector: (state: AppState) => T): T {
  return useStore(useController().store, selector);
}

/** Select from the adapters store (installed adapters, the Adapters panel). */
export function useAdapterState<T>(selector: (state: AdapterState) => T): T {
  return useStore(useController().adapters.store, selector);
}

export function useSettingsState<T>(selector: (state: SettingsState) => T): T {
  return useStore(useController().settings.store, selector);
}

export function useFeedbackState<T>(selector: (state: FeedbackState) => T): T {
  return useStore(useController().feedback.store, selector);
}

export function usePrivacyState<T>(selector: (state: PrivacyViewState) => T): T {
  return useStore(useController().privacy.store, selector);
}

export function useMemoryState<T>(selector: (state: MemoryState) => T): T {
  return useStore(useController().memory.store, selector);
}

export function useDatabaseState<T>(selector: (state: DatabaseViewState) => T): T {
  return useStore(useController().database.store, selector);
}

/** Select from the releases store (adapter versions, gate progress, release history, notices). */
export function useReleaseState<T>(selector: (state: ReleaseState) => T): T {
  return useStore(useController().releases.store, selector);
}

/** Select from the registry updates store (Settings, "Adapter updates"). */
export function useUpdateState<T>(selector: (state: UpdateState) => T): T {
  return useStore(useController().updates.store, selector);
}

/** Select from the model hub store (the Models dialog, search, repo files, downloads, token). */
export function useHubState<T>(selector: (state: HubState) => T): T {
  return useStore(useController().hub.store, selector);
}

/** Select from the local models store (My models, the load settings dialog). */
export function useLocalModelsState<T>(selector: (state: LocalModelsState) => T): T {
  return useStore(useController().localModels.store, selector);
}

export function useEngineBuildState<T>(selector: (state: EngineBuildState) => T): T {
  return useStore(useController().engineBuild.store, selector);
}

/** Select from the MCP servers and tools store (Settings, "Tools & MCP servers"). */
export function useMcpState<T>(selector: (state: McpState) => T): T {
  return useStore(useController().mcp.store, selector);
}

/** Select from the local API server store (Settings, "Local API server"). */
export function useLocalServerState<T>(selector: (state: LocalServerState) => T): T {
  return useStore(useController().localServer.store, selector);
}
