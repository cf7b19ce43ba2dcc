/** Entry of `npm run contract`; see contract-command.ts. */
import { runContractCommand } from "./contract-command";

const { code } = await runContractCommand(process.argv.slice(2), {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
});
process.exit(code);
