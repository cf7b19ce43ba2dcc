import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import defaultContractJson from "../../../resources/contracts/default.json";
import smokeContractJson from "../../../resources/contracts/smoke.json";
import { type Contract, contractLabel, parseContract } from "./contract-schema";

/**
 * The bundled default contract (resources/contracts/default.json, `macaron-default`): held-out
 * tasks per specialist, generated from resources/training/*.heldout.jsonl, with per-tag
 * minimum pass rates and a paired comparison with the live version. Validated.
 */
export function defaultContract(): Contract {
  return parseContract(defaultContractJson, "default.json");
}

/**
 * The bundled smoke contract (resources/contracts/smoke.json, `macaron-smoke`): six cases that
 * check each deterministic fixture adapter answers with its own marker. For tests and
 * benchmarks on the generated demo adapters, which produce markers, not tasks.
 */
export function smokeContract(): Contract {
  return parseContract(smokeContractJson, "smoke.json");
}

/** `macaron-default@2.0.0`: part of the harness version. */
export const DEFAULT_CONTRACT_LABEL = contractLabel(defaultContractJson);
export const SMOKE_CONTRACT_LABEL = contractLabel(smokeContractJson);

/** Names the contract the app's gate runs: "default", "smoke" or a contract file's path. */
export const CONTRACT_ENV = "MACARON_CONTRACT";

/**
 * The contract the evaluation gate runs: the one `MACARON_CONTRACT` names (a bundled name or a
 * file, e.g. a team's own contract, or the smoke contract for the fixture adapters in tests),
 * else the default. Throws naming the problem when the named contract is unusable: a gate must
 * never silently run another contract than the one asked for.
 */
export function gateContract(env: NodeJS.ProcessEnv = process.env): Contract {
  const named = env[CONTRACT_ENV]?.trim();
  if (!named || named === "default") return defaultContract();
  if (named === "smoke") return smokeContract();
  const path = resolve(named);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`${CONTRACT_ENV}: cannot read the contract ${path}: ${(err as Error).message}`);
  }
  return parseContract(json, path);
}
