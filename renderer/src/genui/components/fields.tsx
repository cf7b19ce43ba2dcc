/** One form field per catalog field kind, each an accessible react-aria component with a label. */
import {
  Button,
  Checkbox,
  Group,
  Input,
  Label,
  ListBox,
  ListBoxItem,
  NumberField,
  Popover,
  Select,
  SelectValue,
  Slider,
  SliderOutput,
  SliderThumb,
  SliderTrack,
  TextArea,
  TextField,
} from "react-aria-components";
import type { FormField, InteractionValue } from "../../../../electron/api/genui";

export interface FieldProps {
  field: FormField;
  value: InteractionValue | undefined;
  onChange: (value: InteractionValue) => void;
  disabled: boolean;
}

export function FieldView({ field, value, onChange, disabled }: FieldProps) {
  switch (field.kind) {
    case "text":
      return (
        <TextField
          className="genui-field"
          isRequired={field.required}
          isDisabled={disabled}
          maxLength={field.maxLength}
          value={typeof value === "string" ? value : ""}
          onChange={onChange}
        >
          <Label className="genui-label">{field.label}</Label>
          {field.multiline ? (
            <TextArea className="genui-input" placeholder={field.placeholder} />
          ) : (
            <Input className="genui-input" placeholder={field.placeholder} />
          )}
        </TextField>
      );
    case "number":
      return (
        <NumberField
          className="genui-field"
          isRequired={field.required}
          isDisabled={disabled}
          minValue={field.min}
          maxValue={field.max}
          step={field.step}
          value={typeof value === "number" ? value : Number.NaN}
          onChange={(v) => onChange(Number.isNaN(v) ? null : v)}
        >
          <Label className="genui-label">{field.label}</Label>
          <Group className="genui-number">
            <Button slot="decrement" className="button button--small">
              −
            </Button>
            <Input className="genui-input" />
            <Button slot="increment" className="button button--small">
              +
            </Button>
          </Group>
        </NumberField>
      );
    case "select":
      return (
        <Select
          className="genui-field"
          isRequired={field.required}
          isDisabled={disabled}
          value={typeof value === "string" ? value : null}
          onChange={(key) => onChange(key === null ? null : String(key))}
        >
          <Label className="genui-label">{field.label}</Label>
          <Button className="genui-input genui-select">
            <SelectValue />
            <span aria-hidden="true">▾</span>
          </Button>
          <Popover className="genui-popover">
            <ListBox className="genui-listbox">
              {field.options.map((o) => (
                <ListBoxItem key={o.value} id={o.value} className="genui-listbox__item" textValue={o.label}>
                  {o.label}
                </ListBoxItem>
              ))}
            </ListBox>
          </Popover>
        </Select>
      );
    case "checkbox":
      return (
        <Checkbox
          className="genui-checkbox"
          isDisabled={disabled}
          isSelected={value === true}
          onChange={onChange}
        >
          <span className="genui-checkbox__box" aria-hidden="true" />
          {field.label}
        </Checkbox>
      );
    case "date":
      // The native date input inside react-aria's TextField: labelled, keyboard-usable, YYYY-MM-DD.
      return (
        <TextField
          className="genui-field"
          isRequired={field.required}
          isDisabled={disabled}
          value={typeof value === "string" ? value : ""}
          onChange={onChange}
        >
          <Label className="genui-label">{field.label}</Label>
          <Input className="genui-input" type="date" min={field.min} max={field.max} />
        </TextField>
      );
    case "slider":
      return (
        <Slider
          className="genui-field genui-slider"
          isDisabled={disabled}
          minValue={field.min}
          maxValue={field.max}
          step={field.step ?? 1}
          value={typeof value === "number" ? value : field.min}
          onChange={(v: number | number[]) => onChange(Array.isArray(v) ? (v[0] ?? field.min) : v)}
        >
          <div className="genui-slider__head">
            <Label className="genui-label">{field.label}</Label>
            <SliderOutput />
          </div>
          <SliderTrack className="genui-slider__track">
            <SliderThumb className="genui-slider__thumb" />
          </SliderTrack>
        </Slider>
      );
  }
}

/** A submitted value as text. */
export function valueText(field: FormField, value: InteractionValue | undefined): string {
  if (value === null || value === undefined || value === "") return "—";
  if (field.kind === "checkbox") return value === true ? "Yes" : "No";
  if (field.kind === "select") return field.options.find((o) => o.value === value)?.label ?? String(value);
  return Array.isArray(value) ? value.join(", ") : String(value);
}
