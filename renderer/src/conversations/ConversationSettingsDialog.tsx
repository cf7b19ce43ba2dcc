/**
 * "Chat settings" (issue 13): the open conversation's system prompt and sampling, and named
 * presets of both. Opened from the header like the app's other dialogs (app/Modal: focus stays
 * inside, Escape closes, focus goes back to the opener); its fields are react-aria's.
 */
import { useEffect, useState } from "react";
import {
  Button,
  Input,
  Label,
  ListBox,
  ListBoxItem,
  NumberField,
  Popover,
  Select,
  SelectValue,
  Text,
  TextArea,
  TextField,
  type Key,
} from "react-aria-components";
import type { SamplingPreset } from "../../../electron/api";
import { errorMessage } from "../api";
import { useAppState, useController } from "../app/controller-context";
import { Modal } from "../app/Modal";
import { withCreatedConversation } from "./conversation-logic";
import {
  formFrom,
  formProblem,
  SAMPLING_FIELDS,
  settingsFrom,
  defaultLabel,
  type SamplingField,
  type SettingsForm,
} from "./settings-logic";
import "./conversation-settings.css";

/** The dialog; mounted = open (see Modal: Escape and Close call `onClose`, focus goes back). */
export function ConversationSettingsDialog({ onClose }: { onClose: () => void }) {
  return (
    <Modal title="Chat settings" onClose={onClose} className="settings-dialog">
      <SettingsBody close={onClose} />
    </Modal>
  );
}

const EMPTY_FORM: SettingsForm = { systemPrompt: "", sampling: {} };

function SettingsBody({ close }: { close: () => void }) {
  const controller = useController();
  const { api } = controller;
  const currentId = useAppState((s) => s.currentId);
  const contextSize = useAppState((s) => s.engine?.settings?.contextSize ?? null);
  const [form, setForm] = useState<SettingsForm | null>(currentId ? null : EMPTY_FORM);
  const [presets, setPresets] = useState<SamplingPreset[]>([]);
  const [presetId, setPresetId] = useState<string | null>(null);
  const [presetName, setPresetName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [popoverHost, setPopoverHost] = useState<HTMLDivElement | null>(null);

  useEffect(() => {
    let live = true;
    const load = async () => {
      try {
        const [settings, list] = await Promise.all([
          currentId ? api.call("conversations.getSettings", { id: currentId }) : null,
          api.call("presets.list", {}),
        ]);
        if (!live) return;
        if (settings) setForm(formFrom(settings));
        setPresets(list);
      } catch (err) {
        if (!live) return;
        setForm((f) => f ?? EMPTY_FORM);
        setError(`Could not load the settings: ${errorMessage(err)}`);
      }
    };
    void load();
    return () => {
      live = false;
    };
  }, [api, currentId]);

  const problem = form ? formProblem(form, contextSize) : null;

  /** Run `body`, showing its error in the dialog. */
  const run = async (body: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await body();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  const save = () =>
    run(async () => {
      if (!form) return;
      let id = currentId;
      if (!id) {
        // A new chat exists only once something is sent: the settings make it now.
        const created = await api.call("conversations.create", {});
        const draft = controller.store.getState().draftAdapters;
        const conversation =
          draft === "auto"
            ? created
            : await api.call("conversations.setAdapters", { id: created.id, adapters: draft });
        controller.store.setState((s) => withCreatedConversation(s, conversation));
        id = conversation.id;
      }
      await api.call("conversations.setSettings", { id, ...settingsFrom(form) });
      close();
    });

  const applyPreset = (key: Key | null) => {
    const preset = presets.find((p) => p.id === key);
    setPresetId(preset?.id ?? null);
    if (preset) {
      setForm(formFrom(preset));
      setPresetName(preset.name);
    }
  };

  const savePreset = () =>
    run(async () => {
      if (!form) return;
      const saved = await api.call("presets.save", { name: presetName, ...settingsFrom(form) });
      setPresets(await api.call("presets.list", {}));
      setPresetId(saved.id);
    });

  const deletePreset = () =>
    run(async () => {
      if (!presetId) return;
      await api.call("presets.delete", { id: presetId });
      setPresets((list) => list.filter((p) => p.id !== presetId));
      setPresetId(null);
    });

  return (
    <>
      {!form ? (
        <p role="status">Loading…</p>
      ) : (
        <form
          className="settings-dialog__form"
          onSubmit={(e) => {
            e.preventDefault();
            // The dialog is portalled, but React events still bubble to its owner (see Modal).
            e.stopPropagation();
            if (!problem) void save();
          }}
        >
          <div className="settings-dialog__presets">
            <Select
              className="settings-field"
              placeholder="Choose a preset"
              selectedKey={presetId}
              onSelectionChange={applyPreset}
              isDisabled={presets.length === 0}
            >
              <Label>Preset</Label>
              <Button className="button settings-select">
                <SelectValue />
                <span aria-hidden="true">▾</span>
              </Button>
              {/* Inside the dialog: a modal <dialog> makes the rest of the page inert. */}
              <Popover className="settings-popover" UNSTABLE_portalContainer={popoverHost ?? undefined}>
                <ListBox className="settings-listbox" items={presets}>
                  {(p) => (
                    <ListBoxItem id={p.id} className="settings-listbox__item" textValue={p.name}>
                      {p.name}
                    </ListBoxItem>
                  )}
                </ListBox>
              </Popover>
            </Select>
            <Button className="button" isDisabled={!presetId || busy} onPress={() => void deletePreset()}>
              Delete preset
            </Button>
          </div>

          <TextField
            className="settings-field"
            value={form.systemPrompt}
            onChange={(systemPrompt) => setForm({ ...form, systemPrompt })}
          >
            <Label>System prompt</Label>
            <TextArea className="settings-input" placeholder="Empty: Macaron's own system prompt" />
            <Text slot="description">Replaces the app&apos;s system prompt in every turn of this chat.</Text>
          </TextField>

          <div className="settings-dialog__grid">
            {SAMPLING_FIELDS.map((field) => (
              <SamplingInput
                key={field.key}
                field={field}
                contextSize={contextSize}
                value={form.sampling[field.key]}
                onChange={(v) => setForm({ ...form, sampling: { ...form.sampling, [field.key]: v } })}
              />
            ))}
          </div>

          <div className="settings-dialog__presets">
            <TextField className="settings-field" value={presetName} onChange={setPresetName} maxLength={80}>
              <Label>Preset name</Label>
              <Input className="settings-input" />
            </TextField>
            <Button
              className="button"
              isDisabled={!presetName.trim() || !!problem || busy}
              onPress={() => void savePreset()}
            >
              Save as preset
            </Button>
          </div>

          {(error ?? problem) && (
            <p className="form-error" role="alert">
              {error ?? problem}
            </p>
          )}
          <div ref={setPopoverHost} />
          <div className="modal__actions">
            <Button className="button" onPress={close}>
              Cancel
            </Button>
            <Button type="submit" className="button button--primary" isDisabled={!!problem || busy}>
              Save
            </Button>
          </div>
        </form>
      )}
    </>
  );
}

/** One sampler: empty means the default. Integers where the API takes integers. */
function SamplingInput({
  field,
  contextSize,
  value,
  onChange,
}: {
  field: SamplingField;
  contextSize: number | null;
  value: number | undefined;
  onChange: (value: number) => void;
}) {
  // The sampling the conversation's last answer was generated with (defaults filled in by core).
  const used = useAppState((s) => {
    const list = s.currentId ? s.messages[s.currentId] : undefined;
    for (let i = (list?.length ?? 0) - 1; i >= 0; i--) {
      const sampling = list![i]!.generation?.sampling;
      if (sampling) return sampling;
    }
    return undefined;
  });
  const integer = field.step === 1;
  const max = field.max ?? (field.key === "maxTokens" ? (contextSize ?? undefined) : undefined);
  return (
    <NumberField
      className="settings-field"
      value={value ?? Number.NaN}
      onChange={onChange}
      minValue={field.min}
      maxValue={max}
      // A decimal step would snap what is typed (0.73 → 0.75): only integers step.
      step={integer ? 1 : undefined}
      formatOptions={{ useGrouping: false, maximumFractionDigits: integer ? 0 : 3 }}
    >
      <Label>{field.label}</Label>
      <Input className="settings-input" placeholder={defaultLabel(field.key, used)} />
      <Text slot="description">{field.hint}</Text>
    </NumberField>
  );
}
