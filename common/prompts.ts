/**
 * The prompts the app sends and the trainer lays out the same way (cloud/training): the default
 * system prompt and what the model is told in UI mode. Part of the harness hash.
 */
export const DEFAULT_SYSTEM_PROMPT = "You are Macaron, a helpful local assistant.";

/**
 * What the model is told in UI mode, appended to the system prompt. Short on purpose: the
 * grammar enforces the syntax, this says what the components mean. Part of the harness hash.
 */
export const GENUI_INSTRUCTIONS = [
  'Answer with a JSON UI document: {"version":1,"blocks":[…]}.',
  'A block is {"kind":"text","markdown":"…"} or {"kind":"ui","root":NODE}.',
  'A NODE is {"type":…,"id":…,"props":{…},"children":[NODE…]}; ids are unique; only containers have children.',
  "Containers: Card{title,subtitle}, Stack{gap}, Row{gap,wrap}, Tabs{label} (children: Tab), Tab{label}.",
  "Content: Text{markdown}, Heading{text,level}, Link{label,url}, KeyValue{title,items:[{key,value}]},",
  "Callout{tone:info|success|warning|error,title,markdown}, Progress{label,value,max}, CodeBlock{code,language},",
  "Table{caption,columns:[{key,label,numeric}],rows:[[cell…]],sortable}, Chart{kind:bar|line|pie,title,labels,series:[{name,values}],unit}.",
  "Input: Form{title,submitLabel,fields:[{kind:text|number|select|checkbox|date|slider,name,label,…}]},",
  "Button{label,action,variant}, ButtonGroup{label,buttons}, ChoiceList{label,options:[{value,label}],multiple}.",
  "Write null for a prop you leave out. No HTML, no styles, no images.",
  'When the user uses a component you receive {"uiEvent":{component,action,values}}: answer it.',
].join("\n");

/** The system prompt of a UI-mode turn. */
export function uiSystemPrompt(base: string): string {
  return base ? `${base}\n\n${GENUI_INSTRUCTIONS}` : GENUI_INSTRUCTIONS;
}
