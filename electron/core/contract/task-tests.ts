/**
 * The unit tests of the default contract's held-out coding tasks, keyed by the reference
 * answer's function name (resources/training/coding.heldout.jsonl). Each call gives the
 * arguments and the value a right answer returns. A test (task-contract.test.ts) runs every
 * reference answer against its tests in the sandbox: each case is answerable.
 *
 * The prompts do not name the function: the test calls the first function the answer defines.
 */
import type { SandboxCall } from "./sandbox/protocol";

const c = (args: unknown[], expect: unknown): SandboxCall => ({ args, expect });

const SQUARE = [c([3], 9), c([-4], 16), c([0], 0), c([1.5], 2.25)];
const ODD = [c([3], true), c([4], false), c([0], false), c([-7], true)];
const COUNT_CHARS = [c(["hello"], 5), c([""], 0), c(["a b"], 3)];
const MULTIPLY = [c([3, 4], 12), c([-2, 5], -10), c([0, 9], 0)];
const FIRST = [c([[7, 8, 9]], 7), c([["x"]], "x")];
const LOWER = [c(["HeLLo"], "hello"), c(["ABC 1"], "abc 1"), c([""], "")];
const REVERSE = [c([[1, 2, 3]], [3, 2, 1]), c([[]], []), c([["a", "b"]], ["b", "a"])];
const KM_TO_MILES = [c([1.609], 1), c([0], 0), c([16.09], 10)];
const LONGEST_WORD = [c(["the quick brown fox"], 5), c(["a bb ccc"], 3), c(["hello"], 5)];
const STARTS_WITH_CAPITAL = [c(["Hello"], true), c(["hello"], false), c(["1abc"], false)];
const SUBTRACT = [c([10, 4], 6), c([4, 10], -6), c([0, 0], 0)];
const REMOVE_SPACES = [c(["a b c"], "abc"), c(["  x  "], "x"), c(["none"], "none")];

/** Reference function name → its tests (JavaScript and Python names of each task). */
export const HELDOUT_CODING_TESTS: Readonly<Record<string, readonly SandboxCall[]>> = {
  square: SQUARE,
  isOdd: ODD,
  is_odd: ODD,
  countChars: COUNT_CHARS,
  count_chars: COUNT_CHARS,
  multiply: MULTIPLY,
  firstItem: FIRST,
  first_item: FIRST,
  toLower: LOWER,
  to_lower: LOWER,
  reverseList: REVERSE,
  reverse_list: REVERSE,
  kmToMiles: KM_TO_MILES,
  km_to_miles: KM_TO_MILES,
  longestWord: LONGEST_WORD,
  longest_word: LONGEST_WORD,
  startsWithCapital: STARTS_WITH_CAPITAL,
  starts_with_capital: STARTS_WITH_CAPITAL,
  subtract: SUBTRACT,
  removeSpaces: REMOVE_SPACES,
  remove_spaces: REMOVE_SPACES,
};
