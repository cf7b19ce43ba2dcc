import defaultContractJson from "../../../resources/contracts/default.json";
import { type Contract, contractLabel, parseContract } from "./contract-schema";

/** The bundled default contract (resources/contracts/default.json), validated. */
export function defaultContract(): Contract {
  return parseContract(defaultContractJson, "default.json");
}

/** `macaron-default@1.0.0`: part of the harness version. */
export const DEFAULT_CONTRACT_LABEL = contractLabel(defaultContractJson);
