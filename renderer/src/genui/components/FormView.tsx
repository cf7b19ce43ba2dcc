/**
 * A generated form. Submitting sends its values (checked here first, and again by core against
 * the field definitions); afterwards it shows what was submitted (from the stored interaction,
 * so after a reload too) and can be changed and sent again. Leaving it half-filled (it leaves
 * the screen, or the page is hidden, with unsent edits) reports one "abandon" signal.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { Button, Form } from "react-aria-components";
import { checkInteraction, type InteractionValues } from "../../../../electron/api/genui";
import type { NodeOf } from "../node-types";
import { useInteraction } from "../use-interaction";
import { FieldView, valueText } from "./fields";

function initialValues(node: NodeOf<"Form">): InteractionValues {
  const values: InteractionValues = {};
  for (const f of node.props.fields) {
    if (f.kind === "checkbox") values[f.name] = f.defaultValue ?? false;
    else if (f.defaultValue !== undefined) values[f.name] = f.defaultValue;
  }
  return values;
}

export function FormView({ node }: { node: NodeOf<"Form"> }) {
  const { send, busy, error, enabled, last } = useInteraction(node.id);
  const [values, setValues] = useState<InteractionValues>(() => last?.values ?? initialValues(node));
  const [editing, setEditing] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  // Unsent edits, for the abandonment signal (a ref: read in unmount/pagehide handlers).
  const dirty = useRef<InteractionValues | null>(null);
  const { title, submitLabel = "Submit", fields } = node.props;

  // The latest send, for the handlers below that live as long as the form (mount to unmount).
  const sendRef = useRef(send);
  useEffect(() => {
    sendRef.current = send;
  });
  const reportAbandoned = useCallback(() => {
    const unsent = dirty.current;
    if (!unsent) return;
    dirty.current = null;
    sendRef.current("abandon", unsent).catch(() => undefined);
  }, []);

  useEffect(() => {
    const onHide = () => {
      if (document.visibilityState === "hidden") reportAbandoned();
    };
    window.addEventListener("pagehide", reportAbandoned);
    document.addEventListener("visibilitychange", onHide);
    return () => {
      window.removeEventListener("pagehide", reportAbandoned);
      document.removeEventListener("visibilitychange", onHide);
      reportAbandoned();
    };
  }, [reportAbandoned]);

  const submittedView = last && !editing;
  if (submittedView) {
    return (
      <section className="genui-form genui-form--submitted" aria-label={title ?? "Form"}>
        {title && <strong className="genui-form__title">{title}</strong>}
        <p className="genui-submitted" role="status">
          Submitted
        </p>
        <dl className="genui-kv">
          {fields.map((f) => (
            <div key={f.name} className="genui-kv__row">
              <dt>{f.label}</dt>
              <dd>{valueText(f, last.values[f.name])}</dd>
            </div>
          ))}
        </dl>
        {enabled && (
          <Button className="button button--small" onPress={() => setEditing(true)}>
            Change answers
          </Button>
        )}
      </section>
    );
  }

  const update = (name: string, value: InteractionValues[string]) => {
    setValues((v) => {
      const next = { ...v, [name]: value };
      dirty.current = next;
      return next;
    });
  };

  return (
    <Form
      className="genui-form"
      aria-label={title ?? "Form"}
      onSubmit={(event) => {
        event.preventDefault();
        const checked = checkInteraction(node, "submit", values);
        if (!checked.ok) {
          setProblem(checked.reason);
          return;
        }
        setProblem(null);
        void send("submit", checked.values).then((ok) => {
          if (!ok) return;
          dirty.current = null;
          setEditing(false);
        });
      }}
    >
      {title && <strong className="genui-form__title">{title}</strong>}
      {fields.map((f) => (
        <FieldView
          key={f.name}
          field={f}
          value={values[f.name]}
          disabled={!enabled || busy}
          onChange={(v) => update(f.name, v)}
        />
      ))}
      <div className="genui-form__actions">
        <Button type="submit" className="button button--primary" isDisabled={!enabled || busy}>
          {submitLabel}
        </Button>
      </div>
      {(problem ?? error) && (
        <p className="genui-error" role="alert">
          {problem ?? error}
        </p>
      )}
    </Form>
  );
}
