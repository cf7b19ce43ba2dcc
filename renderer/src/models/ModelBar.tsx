import {
  useAdapterState,
  useAppState,
  useController,
  useHubState,
  useMemoryState,
  usePrivacyState,
  useSettingsState,
} from "../app/controller-context";
import { useRef, useState } from "react";
import type { ReactNode } from "react";
import { Button, Menu, MenuItem, MenuTrigger, Popover } from "react-aria-components";
import { NAV_TOGGLE_ID } from "../app/dom-ids";
import {
  AdaptersIcon,
  ChatSettingsIcon,
  DownloadIcon,
  MemoryIcon,
  MenuIcon,
  ModelIcon,
  MoreIcon,
  PrivacyIcon,
  SettingsIcon,
} from "../app/icons";
import { returnFocusTo } from "../app/Modal";
import { ConversationSettingsDialog } from "../conversations/ConversationSettingsDialog";
import { downloadsSummary } from "./hub-logic";
import { LoadProgress } from "./LoadProgress";

/** Header: the loaded model, GPU or CPU, load progress and engine errors, and the Model button. */
export function ModelBar({
  navOpen,
  onToggleNav,
  showEngineError,
}: {
  navOpen: boolean;
  onToggleNav: () => void;
  /** False while the model panel is shown: it shows the error itself (one alert, not two). */
  showEngineError: boolean;
}) {
  const controller = useController();
  const engine = useAppState((s) => s.engine);
  const panelOpen = useAppState((s) => s.modelPanelOpen);
  const model = engine?.model ?? null;
  const adaptersOpen = useAdapterState((s) => s.panelOpen);
  const settingsOpen = useSettingsState((s) => s.open);
  const memoryOpen = useMemoryState((s) => s.open);
  const privacyOpen = usePrivacyState((s) => s.open);
  const downloads = useHubState((s) => s.downloads);
  const hubOpen = useHubState((s) => s.open);
  const running = downloadsSummary(downloads);
  // The open conversation's settings: nothing else in the app needs to know the dialog is open.
  const [chatSettingsOpen, setChatSettingsOpen] = useState(false);

  // One list for both layouts: buttons in the header when it is wide, a "More" menu when not.
  const dialogs: HeaderDialog[] = [
    {
      id: "chat-settings",
      label: "Chat settings",
      icon: <ChatSettingsIcon />,
      open: chatSettingsOpen,
      onOpen: () => setChatSettingsOpen(true),
    },
    {
      id: "adapters",
      label: "Adapters",
      icon: <AdaptersIcon />,
      open: adaptersOpen,
      onOpen: () => controller.adapters.setPanelOpen(true),
    },
    {
      id: "memory",
      label: "Memory",
      icon: <MemoryIcon />,
      open: memoryOpen,
      onOpen: () => {
        controller.memory.setOpen(true);
        // The panel's "Use memory" switch shows the current setting.
        void controller.settings.load();
      },
    },
    {
      id: "privacy",
      label: "Privacy",
      icon: <PrivacyIcon />,
      open: privacyOpen,
      onOpen: () => controller.privacy.setOpen(true),
    },
    {
      id: "settings",
      label: "Settings",
      icon: <SettingsIcon />,
      open: settingsOpen,
      onOpen: () => controller.settings.setOpen(true),
    },
  ];

  return (
    <header className="model-bar">
      <button
        type="button"
        id={NAV_TOGGLE_ID}
        className="icon-button model-bar__nav-toggle"
        aria-label="Show conversations"
        aria-controls="conversation-nav"
        aria-expanded={navOpen}
        onClick={onToggleNav}
      >
        <MenuIcon />
      </button>
      <div className="model-bar__info">
        {model ? (
          <>
            {/* Cut with an ellipsis at a readable width; the full name and file are in the tooltip. */}
            <span className="model-bar__name" title={`${model.name}\n${model.path}`}>
              {model.name}
            </span>
            {model.isDemo && (
              <span className="badge badge--warn" title="Demo — a tiny trained model">
                Demo<span className="model-bar__demo-long"> — a tiny trained model</span>
              </span>
            )}
            <span
              className="badge model-bar__backend"
              title={engine?.gpu ? `GPU backend: ${engine.gpu}` : "Running on the CPU"}
            >
              {engine?.gpu ? `GPU (${engine.gpu})` : "CPU"}
            </span>
          </>
        ) : (
          <span className="model-bar__name model-bar__name--none">No model</span>
        )}
        {engine?.state === "restarting" && <span className="badge badge--warn">Engine restarting…</span>}
      </div>
      {engine?.state === "loading" && <LoadProgress progress={engine.progress} />}
      {engine?.state === "error" && engine.error && showEngineError && (
        <div className="model-bar__error" role="alert" title={engine.error}>
          {engine.error}
        </div>
      )}
      {running && (
        <button
          type="button"
          className="button button--small model-bar__downloads"
          aria-haspopup="dialog"
          aria-expanded={hubOpen}
          // Its text is cut at narrow widths (the icon stays): the name keeps the whole label.
          aria-label={running.label}
          onClick={() => controller.openModels("find")}
        >
          <DownloadIcon />
          <span className="model-bar__wide">{running.label}</span>
        </button>
      )}
      {model && (
        <button
          type="button"
          className="button"
          aria-expanded={panelOpen}
          aria-controls="model-panel"
          // The word goes below 420 px (the icon stays): the name must not go with it.
          aria-label="Model"
          title="Model"
          onClick={() => controller.models.setPanelOpen(!panelOpen)}
        >
          <ModelIcon />
          <span className="model-bar__label">Model</span>
        </button>
      )}
      <div className="model-bar__dialogs">
        {dialogs.map((d) => (
          <button
            key={d.id}
            type="button"
            className="button"
            aria-haspopup="dialog"
            aria-expanded={d.open}
            onClick={d.onOpen}
          >
            {d.icon}
            {d.label}
          </button>
        ))}
      </div>
      <OverflowMenu dialogs={dialogs} />
      {chatSettingsOpen && <ConversationSettingsDialog onClose={() => setChatSettingsOpen(false)} />}
    </header>
  );
}

interface HeaderDialog {
  id: string;
  label: string;
  icon: ReactNode;
  open: boolean;
  onOpen: () => void;
}

/**
 * The dialogs' buttons at narrow widths (CSS shows this or the buttons, never both): the header
 * stays one row down to 360 px. The dialog returns focus to this trigger, as the item that
 * opened it is gone with the menu.
 */
function OverflowMenu({ dialogs }: { dialogs: HeaderDialog[] }) {
  const trigger = useRef<HTMLButtonElement>(null);
  return (
    <MenuTrigger>
      <Button ref={trigger} className="icon-button model-bar__more" aria-label="More">
        <MoreIcon />
      </Button>
      <Popover className="menu-popover" placement="bottom end">
        <Menu
          className="menu"
          aria-label="More"
          onAction={(key) => {
            returnFocusTo(trigger.current);
            dialogs.find((d) => d.id === key)?.onOpen();
          }}
        >
          {dialogs.map((d) => (
            <MenuItem key={d.id} id={d.id} className="menu__item" textValue={d.label}>
              {d.icon}
              {d.label}
            </MenuItem>
          ))}
        </Menu>
      </Popover>
    </MenuTrigger>
  );
}
