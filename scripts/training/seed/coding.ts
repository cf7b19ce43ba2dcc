/**
 * Coding: one short sentence, then a fenced code block with a language tag holding a small
 * function named after the task (JavaScript or Python, whichever the prompt asks for).
 */
import { type Family, fill, type SplitFamily } from "./types";

export interface CodingTask {
  /** Imperative, as in "How do I reverse a string?" */
  task: string;
  /** Third person, as in "a function that reverses a string". */
  does: string;
  /** One plain sentence saying how (the base model's prose answer in the pretraining corpus). */
  explain: string;
  js: { name: string; params: string; body: string };
  py: { name: string; params: string; body: string };
}

export type CodingLanguage = "js" | "python";
export interface CodingSubject {
  t: CodingTask;
  lang: CodingLanguage;
}

const t = (
  task: string,
  does: string,
  explain: string,
  js: [string, string, string],
  py: [string, string, string],
): CodingTask => ({
  task,
  does,
  explain,
  js: { name: js[0], params: js[1], body: js[2] },
  py: { name: py[0], params: py[1], body: py[2] },
});

const TRAIN: readonly CodingTask[] = [
  t(
    "reverse a string",
    "reverses a string",
    "Take the characters in reverse order and join them again.",
    ["reverseString", "s", 'return [...s].reverse().join("");'],
    ["reverse_string", "s", "return s[::-1]"],
  ),
  t(
    "add two numbers",
    "adds two numbers",
    "Take both numbers and return their sum.",
    ["add", "a, b", "return a + b;"],
    ["add", "a, b", "return a + b"],
  ),
  t(
    "check if a number is even",
    "checks if a number is even",
    "A number is even when dividing it by two leaves nothing.",
    ["isEven", "n", "return n % 2 === 0;"],
    ["is_even", "n", "return n % 2 == 0"],
  ),
  t(
    "find the largest number in a list",
    "finds the largest number in a list",
    "Go through the list and keep the biggest value seen.",
    ["maxOf", "xs", "return Math.max(...xs);"],
    ["max_of", "xs", "return max(xs)"],
  ),
  t(
    "sum a list of numbers",
    "sums a list of numbers",
    "Add the numbers one by one, starting from zero.",
    ["sumList", "xs", "return xs.reduce((a, b) => a + b, 0);"],
    ["sum_list", "xs", "return sum(xs)"],
  ),
  t(
    "count the words in a sentence",
    "counts the words in a sentence",
    "Split the sentence on spaces and count the pieces.",
    ["countWords", "s", "return s.split(/\\s+/).filter(Boolean).length;"],
    ["count_words", "s", "return len(s.split())"],
  ),
  t(
    "capitalize a word",
    "capitalizes a word",
    "Make the first letter upper case and keep the rest.",
    ["capitalize", "w", "return w.charAt(0).toUpperCase() + w.slice(1);"],
    ["capitalize", "w", "return w[:1].upper() + w[1:]"],
  ),
  t(
    "check if a string is a palindrome",
    "checks if a string is a palindrome",
    "Compare the text with the same text read backwards.",
    ["isPalindrome", "s", 'return s === [...s].reverse().join("");'],
    ["is_palindrome", "s", "return s == s[::-1]"],
  ),
  t(
    "compute the factorial of a number",
    "computes the factorial of a number",
    "Multiply all whole numbers from one up to it.",
    ["factorial", "n", "return n <= 1 ? 1 : n * factorial(n - 1);"],
    ["factorial", "n", "return 1 if n <= 1 else n * factorial(n - 1)"],
  ),
  t(
    "remove duplicates from a list",
    "removes duplicates from a list",
    "Keep each value the first time it appears and skip repeats.",
    ["unique", "xs", "return [...new Set(xs)];"],
    ["unique", "xs", "return list(dict.fromkeys(xs))"],
  ),
  t(
    "convert Celsius to Fahrenheit",
    "converts Celsius to Fahrenheit",
    "Multiply by nine fifths and add thirty-two.",
    ["celsiusToFahrenheit", "c", "return c * 9 / 5 + 32;"],
    ["celsius_to_fahrenheit", "c", "return c * 9 / 5 + 32"],
  ),
  t(
    "count the vowels in a string",
    "counts the vowels in a string",
    "Look at each letter and count the ones that are vowels.",
    ["countVowels", "s", "return (s.match(/[aeiou]/gi) || []).length;"],
    ["count_vowels", "s", 'return sum(ch in "aeiouAEIOU" for ch in s)'],
  ),
  t(
    "get the last item of a list",
    "returns the last item of a list",
    "Read the element at the final position.",
    ["lastItem", "xs", "return xs[xs.length - 1];"],
    ["last_item", "xs", "return xs[-1]"],
  ),
  t(
    "square every number in a list",
    "squares every number in a list",
    "Multiply each number by itself and keep the results.",
    ["squareAll", "xs", "return xs.map((x) => x * x);"],
    ["square_all", "xs", "return [x * x for x in xs]"],
  ),
  t(
    "keep only the even numbers of a list",
    "keeps only the even numbers of a list",
    "Filter the list with a test for even numbers.",
    ["evensOnly", "xs", "return xs.filter((x) => x % 2 === 0);"],
    ["evens_only", "xs", "return [x for x in xs if x % 2 == 0]"],
  ),
  t(
    "join words with commas",
    "joins words with commas",
    "Put a comma and a space between the words.",
    ["joinWithCommas", "words", 'return words.join(", ");'],
    ["join_with_commas", "words", 'return ", ".join(words)'],
  ),
  t(
    "check if a list is empty",
    "checks if a list is empty",
    "A list is empty when its length is zero.",
    ["isEmpty", "xs", "return xs.length === 0;"],
    ["is_empty", "xs", "return len(xs) == 0"],
  ),
  t(
    "find the average of a list",
    "finds the average of a list",
    "Add up the numbers and divide by how many there are.",
    ["average", "xs", "return xs.reduce((a, b) => a + b, 0) / xs.length;"],
    ["average", "xs", "return sum(xs) / len(xs)"],
  ),
  t(
    "convert a string to uppercase",
    "converts a string to uppercase",
    "Turn every letter into its capital form.",
    ["toUpper", "s", "return s.toUpperCase();"],
    ["to_upper", "s", "return s.upper()"],
  ),
  t(
    "repeat a string several times",
    "repeats a string several times",
    "Glue copies of the text together the given number of times.",
    ["repeatText", "s, n", "return s.repeat(n);"],
    ["repeat_text", "s, n", "return s * n"],
  ),
  t(
    "find the smallest number in a list",
    "finds the smallest number in a list",
    "Go through the list and keep the lowest value seen.",
    ["minOf", "xs", "return Math.min(...xs);"],
    ["min_of", "xs", "return min(xs)"],
  ),
  t(
    "check if a word is in a sentence",
    "checks if a word is in a sentence",
    "Split the sentence into words and look for the word.",
    ["hasWord", "sentence, word", 'return sentence.split(" ").includes(word);'],
    ["has_word", "sentence, word", "return word in sentence.split()"],
  ),
  t(
    "count how often an item appears in a list",
    "counts how often an item appears in a list",
    "Go through the list and count the matching items.",
    ["countOf", "xs, item", "return xs.filter((x) => x === item).length;"],
    ["count_of", "xs, item", "return xs.count(item)"],
  ),
  t(
    "clamp a number between two limits",
    "clamps a number between two limits",
    "Raise it to the lower limit or cut it to the upper one.",
    ["clamp", "x, lo, hi", "return Math.min(Math.max(x, lo), hi);"],
    ["clamp", "x, lo, hi", "return min(max(x, lo), hi)"],
  ),
  t(
    "check if a number is positive",
    "checks if a number is positive",
    "A number is positive when it is greater than zero.",
    ["isPositive", "n", "return n > 0;"],
    ["is_positive", "n", "return n > 0"],
  ),
  t(
    "double every number in a list",
    "doubles every number in a list",
    "Multiply each number by two and keep the results.",
    ["doubleAll", "xs", "return xs.map((x) => x * 2);"],
    ["double_all", "xs", "return [x * 2 for x in xs]"],
  ),
  t(
    "get the first items of a list",
    "returns the first items of a list",
    "Take a slice from the start up to the count you want.",
    ["firstN", "xs, n", "return xs.slice(0, n);"],
    ["first_n", "xs, n", "return xs[:n]"],
  ),
  t(
    "count the lines in a text",
    "counts the lines in a text",
    "Split the text at line breaks and count the parts.",
    ["countLines", "text", 'return text.split("\\n").length;'],
    ["count_lines", "text", "return len(text.splitlines())"],
  ),
  t(
    "trim spaces from a string",
    "trims spaces from a string",
    "Remove the blank characters at both ends.",
    ["trimSpaces", "s", "return s.trim();"],
    ["trim_spaces", "s", "return s.strip()"],
  ),
  t(
    "check if a year is a leap year",
    "checks if a year is a leap year",
    "Leap years divide by four, but centuries must divide by four hundred.",
    ["isLeapYear", "y", "return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;"],
    ["is_leap_year", "y", "return (y % 4 == 0 and y % 100 != 0) or y % 400 == 0"],
  ),
  t(
    "convert minutes to hours",
    "converts minutes to hours",
    "Divide the minutes by sixty.",
    ["minutesToHours", "m", "return m / 60;"],
    ["minutes_to_hours", "m", "return m / 60"],
  ),
  t(
    "check if a string is empty",
    "checks if a string is empty",
    "A string is empty when it has no characters.",
    ["isBlank", "s", 'return s === "";'],
    ["is_blank", "s", 'return s == ""'],
  ),
];

const HELDOUT: readonly CodingTask[] = [
  t(
    "compute the square of a number",
    "computes the square of a number",
    "Multiply the number by itself.",
    ["square", "n", "return n * n;"],
    ["square", "n", "return n * n"],
  ),
  t(
    "check if a number is odd",
    "checks if a number is odd",
    "A number is odd when dividing by two leaves one.",
    ["isOdd", "n", "return n % 2 !== 0;"],
    ["is_odd", "n", "return n % 2 == 1"],
  ),
  t(
    "count the characters in a string",
    "counts the characters in a string",
    "Read the length of the text.",
    ["countChars", "s", "return s.length;"],
    ["count_chars", "s", "return len(s)"],
  ),
  t(
    "multiply two numbers",
    "multiplies two numbers",
    "Return the product of both numbers.",
    ["multiply", "a, b", "return a * b;"],
    ["multiply", "a, b", "return a * b"],
  ),
  t(
    "get the first element of an array",
    "returns the first element of an array",
    "Read the element at position zero.",
    ["firstItem", "xs", "return xs[0];"],
    ["first_item", "xs", "return xs[0]"],
  ),
  t(
    "convert a string to lowercase",
    "converts a string to lowercase",
    "Turn every letter into its small form.",
    ["toLower", "s", "return s.toLowerCase();"],
    ["to_lower", "s", "return s.lower()"],
  ),
  t(
    "reverse the order of an array",
    "reverses the order of an array",
    "Copy the array and turn it around.",
    ["reverseList", "xs", "return [...xs].reverse();"],
    ["reverse_list", "xs", "return xs[::-1]"],
  ),
  t(
    "convert kilometers to miles",
    "converts kilometers to miles",
    "Divide the kilometers by about one point six.",
    ["kmToMiles", "km", "return km / 1.609;"],
    ["km_to_miles", "km", "return km / 1.609"],
  ),
  t(
    "find the length of the longest word",
    "finds the length of the longest word",
    "Measure each word and keep the biggest length.",
    ["longestWord", "s", 'return Math.max(...s.split(" ").map((w) => w.length));'],
    ["longest_word", "s", "return max(len(w) for w in s.split())"],
  ),
  t(
    "check if a string starts with a capital letter",
    "checks if a string starts with a capital letter",
    "Look at the first character and test if it is upper case.",
    ["startsWithCapital", "s", "return /^[A-Z]/.test(s);"],
    ["starts_with_capital", "s", "return s[:1].isupper()"],
  ),
  t(
    "subtract two numbers",
    "subtracts two numbers",
    "Take the second number away from the first.",
    ["subtract", "a, b", "return a - b;"],
    ["subtract", "a, b", "return a - b"],
  ),
  t(
    "remove all spaces from a string",
    "removes all spaces from a string",
    "Replace every space with nothing.",
    ["removeSpaces", "s", 'return s.replaceAll(" ", "");'],
    ["remove_spaces", "s", 'return s.replace(" ", "")'],
  ),
];

const LANGUAGE_NAME: Record<CodingLanguage, string> = { js: "JavaScript", python: "Python" };

/** The code of a task in a language, as the answer's fenced block. */
export function codeBlock(task: CodingTask, lang: CodingLanguage): string {
  if (lang === "js") {
    const f = task.js;
    return `\`\`\`js\nfunction ${f.name}(${f.params}) {\n  ${f.body}\n}\n\`\`\``;
  }
  const f = task.py;
  return `\`\`\`python\ndef ${f.name}(${f.params}):\n    ${f.body}\n\`\`\``;
}

/** The coding specialist's answer: a short sentence, then the code block. */
export function codingAnswer(s: CodingSubject): string {
  return `Here is a ${LANGUAGE_NAME[s.lang]} function:\n${codeBlock(s.t, s.lang)}`;
}

const subjectsOf = (tasks: readonly CodingTask[]): CodingSubject[] =>
  tasks.flatMap((task) => [
    { t: task, lang: "js" as const },
    { t: task, lang: "python" as const },
  ]);

/** `{task}` imperative, `{does}` third person, `{lang}` the language's name. */
export const codingPrompt = (w: string, s: CodingSubject): string =>
  fill(w, { task: s.t.task, does: s.t.does, lang: LANGUAGE_NAME[s.lang] });

const family = (name: string, tasks: readonly CodingTask[], wordings: string[]): Family<CodingSubject> => ({
  name,
  subjects: subjectsOf(tasks),
  wordings,
  keys: (s) => [s.t.task, s.t.does],
  prompt: codingPrompt,
  answer: codingAnswer,
});

export const CODING: SplitFamily<CodingSubject> = {
  train: family("coding", TRAIN, [
    "Write a {lang} function that {does}.",
    "How do I {task} in {lang}?",
    "Show me {lang} code to {task}.",
    "I need a {lang} helper that {does}.",
    "Can you code a {lang} function to {task}?",
    "Give me a {lang} snippet that {does}.",
  ]),
  heldout: family("coding-heldout", HELDOUT, [
    "Please implement, in {lang}, something that {does}.",
    "What is a short {lang} way to {task}?",
    "Could you write me some {lang} that {does}?",
  ]),
  counts: { train: 200, heldout: 36 },
};
