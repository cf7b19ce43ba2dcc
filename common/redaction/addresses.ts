import { type Pass, PLACEHOLDER, replaceCandidates } from "./rule";

// A street name's word: capitalized ("Evergreen", "O'Connell", "St.") or an ordinal ("42nd").
const WORD = String.raw`(?:\p{Lu}[\p{L}'’.-]{0,30}|\d{1,3}(?:st|nd|rd|th))`;
/** `street` → `[Ss]treet`: a word in lower case or capitalized (Node 20's regexes have no (?i:…)). */
const initialEitherCase = (words: string[]): string =>
  `(?:${words.map((w) => `[${w[0]!.toUpperCase()}${w[0]}]${w.slice(1)}`).join("|")})`;
// Street types in English (US, UK, Canada, Australia): "Main St", "Elm street", "Oak Dr".
const SUFFIX = initialEitherCase(
  "street st avenue ave road rd boulevard blvd lane ln drive dr court ct place pl terrace ter way parkway pkwy circle cir highway hwy square sq crescent cres close row alley trail mews grove gardens walk".split(
    " ",
  ),
);
const UNIT = String.raw`(?:,? (?:${initialEitherCase("apt apartment suite ste unit flat floor fl".split(" "))}|#)\.? ?#?[\p{L}\p{N}-]{1,6})?`;

/**
 * "742 Evergreen Terrace", "221B Baker Street", "1600 Pennsylvania Ave NW, Suite 200",
 * "12 W 42nd St": a house number, one to four capitalized words, a street type, an optional
 * direction and unit. Bounded repetitions, words of bounded length: linear.
 */
const NUMBER_FIRST = new RegExp(
  String.raw`(?<![\p{L}\p{N}.,/-])\d{1,5}[A-Za-z]?(?:-\d{1,5})?,? (?:(?:[NSEW]|North|South|East|West)\.? )?(?!The |A |An )(?:${WORD} ){1,4}${SUFFIX}\.?(?: (?:NW|NE|SW|SE|N|S|E|W)\b)?${UNIT}(?![\p{L}\p{N}])`,
  "gu",
);

/**
 * Continental forms, the number after the street: "Hauptstraße 5", "Karl-Marx-Str. 12a",
 * "Keizersgracht 123", "Via Roma 10", "Calle Mayor 5", "Rua Augusta 27", "ul. Długa 3".
 */
const NAME_WORD = String.raw`(?:\p{Lu}\p{Ll}[\p{L}'’.-]{0,29}|de|la|del|di|da|do|dos|das|du|des|della|dei|y)`;
const NUMBER_AFTER = new RegExp(
  String.raw`(?<![\p{L}\p{N}])(?:\p{Lu}[\p{L}-]{0,30}(?:straße|strasse|str\.|Str\.|weg|gasse|platz|allee|damm|ufer|laan|straat|gracht|plein|kade|vej|gatan|gata|veien|vägen|katu)|(?:Via|Viale|Piazza|Corso|Calle|Avenida|Avda\.|Paseo|Rua|Travessa|Largo|ul\.|al\.|Rue|Chemin|Allée|Impasse|Quai)(?: ${NAME_WORD}){1,4}),? \d{1,4}[a-zA-Z]?(?:-\d{1,4})?(?![\p{L}\p{N}])`,
  "gu",
);

/** French: "12 rue de la Paix", "3 bis avenue Victor Hugo". */
const FRENCH = new RegExp(
  String.raw`(?<![\p{L}\p{N}.,/-])\d{1,4}(?: ?(?:bis|ter))?,? ${initialEitherCase("rue avenue boulevard chemin allée impasse quai".split(" "))}(?: [\p{L}'’-]{1,30}){1,5}?(?=[,\n.;)]|$| \d{5}\b)`,
  "gu",
);

/** A post-office box: "P.O. Box 1234", "PO Box 77". */
const PO_BOX = /(?<![A-Za-z])P\.? ?O\.? Box \d{1,6}(?!\d)/gi;

/** Street addresses (the street line: number, street and unit; not the city or postcode). */
export const redactAddresses: Pass = (input, found) => {
  const address = (): string => {
    found("address");
    return PLACEHOLDER.address;
  };
  let text = replaceCandidates(input, PO_BOX, address);
  text = replaceCandidates(text, NUMBER_FIRST, address);
  text = replaceCandidates(text, FRENCH, address);
  return replaceCandidates(text, NUMBER_AFTER, address);
};
