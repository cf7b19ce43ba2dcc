/**
 * Hand-written corpus lines: edge cases a template generator would not produce. The decisions
 * they document:
 * - A bare dotted quad ("1.2.3.4") is an address; after "version"/"v"/"build" it is a version.
 * - Loopback, 0.0.0.0, broadcast and netmasks are not personal; "::" and "::1" neither.
 * - Documentation placeholders in paths (/home/user, /Users/Shared) are not user names.
 * - Digit runs are phones only when they look like phones (+CC, trunk 0, NANP shape, or after
 *   "call"/"tel"/…): years, dates, order numbers, amounts and SSN-like ids are not.
 * - A 16-digit number failing the Luhn check, or not starting with a network digit (2–6), is not a card.
 * - Any syntactically valid email is an email, even an example one.
 * Some lines are known misses, kept so the numbers stay honest (note "known miss").
 */
import type { CorpusLine } from "./generate-corpus";

const e = (value: string) => ({ kind: "email" as const, value });
const ph = (value: string) => ({ kind: "phone" as const, value });
const c = (value: string) => ({ kind: "card" as const, value });
const ib = (value: string) => ({ kind: "iban" as const, value });
const ip = (value: string) => ({ kind: "ip" as const, value });
const s = (value: string) => ({ kind: "secret" as const, value });
const p = (value: string) => ({ kind: "path" as const, value });

export const TRICKY_LINES: CorpusLine[] = [
  { text: "Email me at john.doe@example.com.", pii: [e("john.doe@example.com")], note: "trailing period" },
  { text: "<mailto:Jane.Roe@Sub.Example.ORG>", pii: [e("Jane.Roe@Sub.Example.ORG")] },
  { text: '"jane@example.com","bob@example.net"', pii: [e("jane@example.com"), e("bob@example.net")] },
  {
    text: 'Reply-To: "Support" <support+ticket-4821@help.example.io>',
    pii: [e("support+ticket-4821@help.example.io")],
  },
  {
    text: "Write a regex for emails like name@domain.tld",
    pii: [e("name@domain.tld")],
    note: "example emails are emails",
  },
  { text: "Call +1 (415) 555-2671 ext. 12 today", pii: [ph("+1 (415) 555-2671")] },
  { text: "my cell is 06 12 34 56 78 (France)", pii: [ph("06 12 34 56 78")] },
  { text: "Tel.: 030 12345678", pii: [ph("030 12345678")] },
  { text: "Fax +49 (0)30 1234 5678", pii: [ph("+49 (0)30 1234 5678")] },
  { text: "Meet at 12.30, call 0171 2345678 if late", pii: [ph("0171 2345678")] },
  { text: "text me: 5558675309", pii: [ph("5558675309")], note: "unseparated, after a phone word" },
  { text: "Numbers: 2023, 2024 and 12345 are not phones.", pii: [] },
  { text: "Between 1999-2004 the price was 1.50-2.00.", pii: [] },
  {
    text: "His SSN-like id 078-05-1120 is out of scope.",
    pii: [{ kind: "national-id", value: "078-05-1120" }],
    note: "a US SSN's shape: redacted since issue 27",
  },
  { text: "Card: 4111-1111-1111-1111 exp 12/26 cvc 123", pii: [c("4111-1111-1111-1111")] },
  { text: "AmEx 3782 822463 10005 for travel", pii: [c("3782 822463 10005")] },
  { text: '{"pan":"5555555555554444"}', pii: [c("5555555555554444")] },
  { text: "Two cards: 4012888888881881 and 4222222222222", pii: [c("4012888888881881"), c("4222222222222")] },
  { text: "Order 4111111111111112 was refunded", pii: [], note: "invalid Luhn" },
  { text: "The voucher code 1234 5678 9012 3456 expired", pii: [], note: "no card network starts with 1" },
  { text: "Send €50 to NL91 ABNA 0417 1643 00 (my Dutch account)", pii: [ib("NL91 ABNA 0417 1643 00")] },
  {
    text: "IBAN FR14 2004 1010 0505 0001 3M02 606 — with a letter",
    pii: [ib("FR14 2004 1010 0505 0001 3M02 606")],
  },
  { text: "Pay into CH9300762011623852957 today", pii: [ib("CH9300762011623852957")] },
  {
    text: "Mixed: reach bob@example.com or +44 20 7946 0958; IBAN GB82 WEST 1234 5698 7654 32; card 5105 1051 0510 5100.",
    pii: [
      e("bob@example.com"),
      ph("+44 20 7946 0958"),
      ib("GB82 WEST 1234 5698 7654 32"),
      c("5105 1051 0510 5100"),
    ],
  },
  { text: "Connect to 10.0.0.12:5432 and then 203.0.113.7.", pii: [ip("10.0.0.12"), ip("203.0.113.7")] },
  { text: "curl http://[2001:db8::ff00:42:8329]:8080/health", pii: [ip("2001:db8::ff00:42:8329")] },
  {
    text: "Log: 2024-06-11T10:15:30Z GET /api/v1/users/12345 from 198.51.100.23",
    pii: [ip("198.51.100.23")],
  },
  { text: "ssh -i ~/.ssh/id_rsa deploy@203.0.113.50", pii: [ip("203.0.113.50")] },
  {
    text: "A bare 1.2.3.4 is treated as an address",
    pii: [ip("1.2.3.4")],
    note: "decision: bare dotted quads are addresses",
  },
  { text: "OID 1.3.6.1.4.1 is not an address", pii: [] },
  { text: "Chrome 120.0.6099.109 crashed", pii: [] },
  {
    text: "firmware version 10.0.0.1 is old; netmask 255.255.255.0; bind 0.0.0.0",
    pii: [],
    note: "decision: versions and masks are not addresses",
  },
  { text: "std::cout << a::b; listen on [::1]:3000 or ::", pii: [] },
  {
    text: "export GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    pii: [s("ghp_16C7e42F292c6912E7710c838347Ae178B4a")],
  },
  {
    text: "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    pii: [s("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")],
  },
  {
    text: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----",
    pii: [s("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW")],
  },
  {
    text: 'password = "correct horse battery staple"',
    pii: [s("correct horse battery staple")],
    note: "quoted value with spaces",
  },
  { text: "password: hunter2", pii: [s("hunter2")] },
  { text: "mongodb+srv://app_user:Zx9!pQ2rT7@cluster0.abcde.mongodb.net/db", pii: [s("Zx9!pQ2rT7")] },
  {
    text: "fetch(url, { headers: { Authorization: `Bearer ${token}` } })",
    pii: [],
    note: "a template, not a token",
  },
  { text: "The token: is valid for 1 hour", pii: [] },
  { text: "Here is my sk-learn tutorial: sk-learn-pipeline-examples", pii: [] },
  { text: "xoxb-not-a-real-token", pii: [] },
  { text: "/home/alice/.bashrc and ~/notes", pii: [p("/home/alice")] },
  {
    text: "PS C:\\Users\\Jean-Luc Picard\\source\\repos> dotnet run",
    pii: [p("C:\\Users\\Jean-Luc Picard")],
    note: "user name with a space",
  },
  {
    text: 'File "/Users/mike.ross/venv/lib/python3.11/site-packages/x.py", line 3',
    pii: [p("/Users/mike.ross")],
  },
  { text: "/home/user/.config and /Users/Shared/ are documentation placeholders", pii: [] },
  {
    text: "Visit https://example.com/Users/alice/profile for the page",
    pii: [],
    note: "a URL, not a home folder",
  },
  { text: "WSL path /mnt/c/Users/priya/Downloads/model.gguf", pii: [p("/mnt/c/Users/priya")] },
  {
    text: "Schreib an josé.müller@exämple.de bitte",
    pii: [e("josé.müller@exämple.de")],
    note: "internationalized address",
  },
  { text: "iban de89 3704 0044 0532 0130 00 (lower case)", pii: [ib("de89 3704 0044 0532 0130 00")] },
  {
    text: "The office line is 555-1234.",
    pii: [ph("555-1234")],
    note: "known miss: 7-digit local number without a phone word",
  },
  {
    text: "Mi número: 612 345 678",
    pii: [ph("612 345 678")],
    note: "known miss: Spanish 3-3-3 without a recognised phone word",
  },
  {
    text: "IP address 192.168.001.010 with leading zeros",
    pii: [ip("192.168.001.010")],
    note: "known miss: zero-padded octets",
  },
];
