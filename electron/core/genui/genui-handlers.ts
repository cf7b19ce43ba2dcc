import { CATALOG_VERSION, catalogJsonSchema } from "../../api/genui";
import type { DomainHandlers } from "../handlers";
import type { GenuiService } from "./genui-service";

export function genuiHandlers(service: GenuiService): DomainHandlers<"genui"> {
  // The schema never changes while the app runs: build it once.
  const catalog = { version: CATALOG_VERSION, jsonSchema: catalogJsonSchema() };
  return {
    "genui.interact": (input) => service.interact(input),
    "genui.catalog": () => catalog,
  };
}
