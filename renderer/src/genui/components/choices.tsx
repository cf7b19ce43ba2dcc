/** Buttons and choice lists: each use goes back to the assistant as an interaction. */
import { useState } from "react";
import { Button, Checkbox, CheckboxGroup, Label, Radio, RadioGroup } from "react-aria-components";
import type { NodeOf } from "../node-types";
import { useInteraction } from "../use-interaction";

function ErrorLine({ error }: { error: string | null }) {
  return error ? (
    <p className="genui-error" role="alert">
      {error}
    </p>
  ) : null;
}

export function ButtonView({ node }: { node: NodeOf<"Button"> }) {
  const { send, busy, error, enabled, last } = useInteraction(node.id);
  const { label, action, variant = "secondary" } = node.props;
  return (
    <div className="genui-button">
      <Button
        className={`button genui-button--${variant}`}
        isDisabled={!enabled || busy}
        aria-pressed={last ? true : undefined}
        onPress={() => void send(action, {})}
      >
        {label}
      </Button>
      <ErrorLine error={error} />
    </div>
  );
}

export function ButtonGroupView({ node }: { node: NodeOf<"ButtonGroup"> }) {
  const { send, busy, error, enabled, last } = useInteraction(node.id);
  return (
    <div className="genui-buttons" role="group" aria-label={node.props.label ?? "Choices"}>
      {node.props.buttons.map((b) => (
        <Button
          key={b.action}
          className={`button genui-button--${b.variant ?? "secondary"}`}
          isDisabled={!enabled || busy}
          aria-pressed={last ? last.action === b.action : undefined}
          onPress={() => void send(b.action, {})}
        >
          {b.label}
        </Button>
      ))}
      <ErrorLine error={error} />
    </div>
  );
}

export function ChoiceListView({ node }: { node: NodeOf<"ChoiceList"> }) {
  const { send, busy, error, enabled, last } = useInteraction(node.id);
  const chosen = last && Array.isArray(last.values.selected) ? last.values.selected : [];
  const [selected, setSelected] = useState<string[]>(chosen);
  const { label, options, multiple, submitLabel = "Choose" } = node.props;
  const items = options.map((o) => (
    <div key={o.value} className="genui-choice__item">
      {multiple ? (
        <Checkbox value={o.value} className="genui-checkbox">
          <span className="genui-checkbox__box" aria-hidden="true" />
          {o.label}
        </Checkbox>
      ) : (
        <Radio value={o.value} className="genui-radio">
          {o.label}
        </Radio>
      )}
      {o.description && <span className="genui-choice__description">{o.description}</span>}
    </div>
  ));
  return (
    <div className="genui-choice">
      {multiple ? (
        <CheckboxGroup value={selected} onChange={setSelected} isDisabled={!enabled || busy}>
          <Label className="genui-label">{label}</Label>
          {items}
        </CheckboxGroup>
      ) : (
        <RadioGroup
          value={selected[0] ?? null}
          onChange={(v) => setSelected(v ? [v] : [])}
          isDisabled={!enabled || busy}
        >
          <Label className="genui-label">{label}</Label>
          {items}
        </RadioGroup>
      )}
      <Button
        className="button button--primary"
        isDisabled={!enabled || busy || selected.length === 0}
        onPress={() => void send("select", { selected })}
      >
        {submitLabel}
      </Button>
      {chosen.length > 0 && (
        <p className="genui-submitted" role="status">
          You chose: {chosen.map((v) => options.find((o) => o.value === v)?.label ?? v).join(", ")}
        </p>
      )}
      <ErrorLine error={error} />
    </div>
  );
}
