import { type Pass, PLACEHOLDER, replaceCandidates } from "./rule";

/**
 * Given names common in the app's languages (English, Spanish, Portuguese, French, German,
 * Italian, Dutch, Nordic, Polish, Russian, Indian, Chinese, Japanese, Korean, Arabic, Turkish,
 * Nigerian, Vietnamese). Left out on purpose: names that are also common words or software
 * ("Will", "May", "Mark", "Bill", "Grace", "Hope", "Ruby", "Julia", "Ada", "Jasmine", "Chase"):
 * those are found only after a title or a cue ("Dr.", "my name is").
 */
// prettier-ignore
const GIVEN = new Set(`
aaron abdul abdullah abigail adam adebayo adeola aditya adriana adrian agnieszka ahmed ahmad aisha akira
alejandro aleksandr alessandro alexander alexandra alexei alfonso ali alice alicia alina amanda amara
amir amit ana anastasia andrea andreas andrew andrés angela anika anita ankit anna anne annika anthony
antoine antonio anya arjun arnav ashley astrid ayumi barbara beatriz benjamin bernard bianca björn
bogdan brandon brian bruno camille carla carlos carmen caroline catherine cecilia charlotte chen chiara
chidi chinedu chioma christina christopher claire claudia daniel daniela david deepak diana
diego dimitri dmitri dmitry dominik dorothy duc eduardo elena elif elisa elizabeth ellen emeka emily
emma emre enrique eric erik esther eva fatima fatma felipe felix fernando florian francesca francesco
françois françoise frederik gabriel gabriela georg george giorgio giovanni giulia giuseppe greta
guillaume gustavo hana hannah hans haruto harry heather helen helena henrik hiroshi hoang ibrahim
igor ines ingrid irina isabel isabella ivan jacob jakob james jana janet jason javier jean jennifer
jessica jiho jin joanna joaquín johan johannes john jonas jonathan jorge josé joseph joshua juan julian
julien julie jürgen kaito karen karim katarzyna katharina kathleen kenji kevin khalid kim klaus
krzysztof kumar laura lars laurent layla leila leon leonardo li lin linda lisa liu lorenzo louis lucas
lucía luis luisa lukas magdalena mahmoud maja manuel marco marcus margaret maria mariana marie marina
mario marta martin mary maría mateo matteo matthew maximilian mehmet mei michael michelle miguel mikhail
 ming minh mohamed mohammed monika mustafa nadia naomi natalia nathalie nguyen nicolas nikolai nina
noah nomvula obinna oksana olga oliver olivia omar oscar pablo paolo patricia patrick paul paula pedro
peter philippe pierre piotr pooja priya rachel rafael rahul raj rajesh ramón raúl rebecca ricardo
richard roberto robert rodrigo rohan rosa rui ryan sabine sakura samuel sandra sanjay 
sara sarah sebastian sergei sergio shreya simone sofia sofía sophie stefan stefano stephanie susan
svetlana sven takeshi tatiana thomas tobias tomasz tomás tuan valentina vanessa vera victor viktor
vikram vincent wei wojciech xavier xin yan yasmin yuki yusuf yuto zainab zhang zoltan
`.trim().split(/\s+/));

// A capitalized name word: "Oyelaran", "O'Brien", "McAllister", "Jean-Luc", "Núñez".
const CAP = String.raw`\p{Lu}\p{Ll}[\p{Ll}\p{Lu}'’]{0,24}(?:-\p{Lu}\p{Ll}{1,24})?`;
// Particles inside a surname: "van der Berg", "de la Cruz", "bin Salman".
const PARTICLE = String.raw`(?:van|von|der|den|de|del|della|di|da|dos|das|du|la|le|bin|ibn|al|el)`;
const FULL = String.raw`${CAP}(?: (?:${PARTICLE} ){0,2}${CAP}){0,2}`;

/** A title, then the name: "Dr. Amara Okafor", "Mrs Lindqvist", "Herr Müller". */
const TITLED = new RegExp(
  String.raw`(?<![\p{L}\p{N}])((?:Mr|Mrs|Ms|Mx|Miss|Dr|Prof|Professor|Sir|Dame|Herr|Frau|Mme|Mlle|Sr|Sra|Srta|Sig|Sig\.ra|Dott|Pan|Pani)\.? )(${FULL})(?![\p{L}\p{N}])`,
  "gu",
);

/** Words that introduce a person: "my name is …", "Dear …", "my manager …", "Regards,\n…". */
const CUED = new RegExp(
  String.raw`(?<![\p{L}\p{N}])((?:[Mm]y name is|[Mm]y name's|[Nn]ame: ?|[Cc]all me|[Dd]ear|[Ss]igned,?|[Ss]incerely,?|[Rr]egards,?|[Bb]est,|[Cc]heers,|[Tt]hanks,|[Mm]y (?:wife|husband|partner|son|daughter|mother|mom|mum|father|dad|brother|sister|boss|manager|colleague|coworker|friend|neighbou?r|landlord|doctor|lawyer|teacher|girlfriend|boyfriend|client|tenant)(?:'s name is| is called| named|,)?)[ \n]{1,3})(${FULL})(?![\p{L}\p{N}])`,
  "gu",
);

/** One capitalized word, not part of an identifier, a path or an address. */
const CAPITALIZED = new RegExp(String.raw`(?<![\p{L}\p{N}_./@#$-])${CAP}(?![\p{L}\p{N}_@(-]|\.\p{L})`, "gu");
/** The surnames after a given name, matched where it ends (sticky). */
const SURNAMES = new RegExp(
  String.raw`(?: (?:${PARTICLE} ){0,2}${CAP}){0,2}(?![\p{L}\p{N}_@(-]|\.\p{L})`,
  "uy",
);

// Words a cue may be followed by that are not names ("I'm Sure", "Dear Sir", "Thanks, Team").
const NOT_NAMES = new Set(
  "sir madam team all everyone there sure not going glad happy sorry back done ready here fine new so just also very still trying using working".split(
    " ",
  ),
);

/** Personal names: after a title, after a cue, or a known given name (with any surnames after it). */
export const redactNames: Pass = (input, found) => {
  const name = (): string => {
    found("name");
    return PLACEHOLDER.name;
  };
  let text = replaceCandidates(input, TITLED, (_m, _o, [title]) => `${title}${name()}`);
  text = replaceCandidates(text, CUED, (_m, _o, [cue, who]) => {
    if (NOT_NAMES.has(who!.split(" ")[0]!.toLowerCase())) return null;
    return `${cue}${name()}`;
  });
  // A given name takes the surnames after it along: "Marcus Oyelaran", "Anna van der Berg".
  let out = "";
  let from = 0;
  for (const match of text.matchAll(CAPITALIZED)) {
    const start = match.index;
    const word = match[0].replace(/['’]s$/u, "");
    if (start < from || !GIVEN.has(word.toLowerCase())) continue;
    let end = start + word.length;
    SURNAMES.lastIndex = end;
    const rest = SURNAMES.exec(text);
    if (rest) end += rest[0].length;
    out += text.slice(from, start) + name();
    from = end;
  }
  return out + text.slice(from);
};
