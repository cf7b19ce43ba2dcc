/**
 * Prompts the router never saw, written to sit close to each demo adapter's routing examples
 * (native/gguf/adapters.ts): the accuracy check of the unit and engine tests.
 */
export const HELD_OUT_PROMPTS: ReadonlyArray<{ expected: string; text: string }> = [
  { expected: "chat", text: "How are you doing this evening?" },
  { expected: "chat", text: "Tell me a fun fact about dolphins." },
  { expected: "chat", text: "What should I cook for lunch today?" },
  { expected: "chat", text: "Can you recommend a good movie?" },
  { expected: "chat", text: "Explain why the ocean is salty." },
  { expected: "coding", text: "Write a TypeScript function that sorts an array." },
  { expected: "coding", text: "Why does this JavaScript loop never stop?" },
  { expected: "coding", text: "Fix the null reference exception in my C# code." },
  { expected: "coding", text: "How do I read a JSON file in Node.js?" },
  { expected: "coding", text: "Refactor this SQL query to use a subquery." },
  { expected: "agent", text: "Book a table for four at 8pm and add it to my calendar." },
  { expected: "agent", text: "Plan the steps to move my website to a new server." },
  { expected: "agent", text: "Search my email for the invoice from Sam and summarize it." },
  { expected: "agent", text: "Every Friday, remind me to back up my laptop." },
  { expected: "agent", text: "Find the cheapest hotel in Porto next week and draft an email." },
  { expected: "ui", text: "Show me a form to register for the event." },
  { expected: "ui", text: "Make a table comparing these four phones." },
  { expected: "ui", text: "Give me a checklist for moving to a new apartment." },
  { expected: "ui", text: "Build a slider to pick a price between 10 and 500." },
  { expected: "ui", text: "Show my weekly sleep hours as a chart." },
];
