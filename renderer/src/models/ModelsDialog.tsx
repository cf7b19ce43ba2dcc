import { Tab, TabList, TabPanel, Tabs } from "react-aria-components";
import type { Key } from "react-aria-components";
import { useController, useHubState, useLocalModelsState } from "../app/controller-context";
import { Modal } from "../app/Modal";
import type { ModelsTab } from "./hub-controller";
import { LocalModels } from "./LocalModels";
import { ModelHub } from "./ModelHub";

/** The Models dialog: find and download a model on the hub, or load / delete one on this computer. */
export function ModelsDialog() {
  const controller = useController();
  const tab = useHubState((s) => s.tab);
  const count = useLocalModelsState((s) => s.models?.length ?? null);
  // From the hub: the context chosen for its fit estimate goes into the load settings.
  const openLoad = (path: string) =>
    void controller.localModels.openLoadDialog({
      path,
      contextSize: controller.hub.store.getState().contextSize,
    });
  const close = () => controller.hub.setOpen(false);

  return (
    <Modal title="Models" onClose={close} className="models-dialog">
      <Tabs
        className="models-tabs"
        selectedKey={tab}
        onSelectionChange={(key: Key) => controller.hub.setTab(key as ModelsTab)}
      >
        <TabList aria-label="Models" className="models-tabs__list">
          <Tab id="find" className="models-tabs__tab">
            Find a model
          </Tab>
          <Tab id="local" className="models-tabs__tab">
            My models{count ? ` (${count})` : ""}
          </Tab>
        </TabList>
        <TabPanel id="find" className="models-tabs__panel">
          <ModelHub onLoad={openLoad} />
        </TabPanel>
        <TabPanel id="local" className="models-tabs__panel">
          <LocalModels
            onLoad={(m) =>
              void controller.localModels.openLoadDialog({
                path: m.path,
                name: m.name,
                contextLength: m.contextLength,
              })
            }
            onFind={() => controller.hub.setTab("find")}
          />
        </TabPanel>
      </Tabs>
    </Modal>
  );
}
