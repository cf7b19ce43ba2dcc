/**
 * The MCP server of the agent episodes (episode-tasks.ts), over stdio, written with the SDK's
 * McpServer: `node --import tsx scripts/cycle/self-improve/episode-server.ts --salt S`.
 * Its values are opaque codes of the salt (`episodeCode`), so the episode runner and the reward
 * know what a chain must produce; a call with a value no earlier result gave fails.
 *
 * Tools: find_order {customer} → order id; order_status {order_id} → tracking code;
 * city_of {person} → city; forecast {city} → report id; create_note {title} → note id;
 * add_to_note {note_id, text} → receipt (unknown note: an error); cancel_order {order_id}.
 * order_status and cancel_order know only the orders it issued (find_order's, and those of the
 * search-order family's stored conversations): an invented id is an error, not a tracking code.
 */
import { parseArgs } from "node:util";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { EPISODE_CITIES, EPISODE_ITEMS, cityOf, episodeCode } from "./episode-tasks";

const { values } = parseArgs({ options: { salt: { type: "string" } } });
const salt = values.salt ?? "0";

const json = (value: unknown) => ({ content: [{ type: "text" as const, text: JSON.stringify(value) }] });
const error = (message: string) => ({ content: [{ type: "text" as const, text: message }], isError: true });
const ORDER_ID = /^ORD-[0-9A-F]{4}$/;

function episodeServer(): McpServer {
  const server = new McpServer({ name: "macaron-episodes", version: "1.0.0" });
  const notes = new Map<string, string[]>();
  const issued = new Set(EPISODE_ITEMS.map((item) => episodeCode("ORD", salt, item)));
  const known = (orderId: string) => ORDER_ID.test(orderId.trim()) && issued.has(orderId.trim());
  server.registerTool(
    "find_order",
    {
      description: "Find a customer's latest order; returns its order id.",
      inputSchema: { customer: z.string().min(1).describe("The customer's name") },
    },
    ({ customer }) => {
      const order_id = episodeCode("ORD", salt, customer);
      issued.add(order_id);
      return json({ customer, order_id });
    },
  );
  server.registerTool(
    "order_status",
    {
      description: "The status and tracking code of an order, by its order id (ORD-XXXX).",
      inputSchema: { order_id: z.string().min(1) },
    },
    ({ order_id }) =>
      known(order_id)
        ? json({ order_id, status: "shipped", tracking: episodeCode("TRK", salt, order_id) })
        : error(
            ORDER_ID.test(order_id.trim())
              ? "No such order."
              : `No order "${order_id}": an order id looks like ORD-1A2B.`,
          ),
  );
  server.registerTool(
    "cancel_order",
    {
      description: "Cancel an order, by its order id.",
      inputSchema: { order_id: z.string().min(1) },
    },
    ({ order_id }) => (known(order_id) ? json({ order_id, cancelled: true }) : error("No such order.")),
  );
  server.registerTool(
    "city_of",
    {
      description: "The city a person lives in.",
      inputSchema: { person: z.string().min(1) },
    },
    ({ person }) => json({ person, city: cityOf(salt, person) }),
  );
  server.registerTool(
    "forecast",
    {
      description: "Tomorrow's forecast for a city; returns a report id.",
      inputSchema: { city: z.string().min(1) },
    },
    ({ city }) => {
      const known = EPISODE_CITIES.find((c) => c.toLowerCase() === city.trim().toLowerCase());
      return known
        ? json({ city: known, forecast: "mild, light wind", report_id: episodeCode("WX", salt, known) })
        : error(`No forecast for "${city}".`);
    },
  );
  server.registerTool(
    "create_note",
    {
      description: "Create an empty note with a title; returns its note id.",
      inputSchema: { title: z.string().min(1) },
    },
    ({ title }) => {
      const id = episodeCode("N", salt, title);
      notes.set(id, notes.get(id) ?? []);
      return json({ note_id: id, title });
    },
  );
  server.registerTool(
    "add_to_note",
    {
      description: "Add a line to a note, by its note id; returns a receipt.",
      inputSchema: { note_id: z.string().min(1), text: z.string().min(1) },
    },
    ({ note_id, text }) => {
      const lines = notes.get(note_id.trim());
      if (!lines) return error(`No note "${note_id}": create it first.`);
      lines.push(text);
      return json({ note_id, lines: lines.length, receipt: episodeCode("R", salt, note_id) });
    },
  );
  return server;
}

await episodeServer().connect(new StdioServerTransport());
process.stderr.write("mcp episodes ready on stdio\n");
