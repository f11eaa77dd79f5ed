// One email template filled for many recipients in one provider request. SendGrid takes
// one body per request and, per recipient (a personalization), `substitutions`: token ->
// value pairs it replaces in that recipient's copy of the body. So the template is filled
// with a token where each value goes, and each recipient's values are its substitutions:
// the body is the same for every recipient whose email has the same shape (the same
// optional blocks shown, the same number of list items), and each copy, once SendGrid has
// replaced the tokens, is byte for byte the email fillEmailTemplate renders for that
// recipient (test/notifications/personalize.unit.test.ts holds every template to that).
//
// The tokens, and why they cannot meet real content. A token is `h3` or `t3` between two
// backticks: the HTML part's and the text part's are distinct, because a value is
// HTML-escaped in the one and left as it is in the other. No compiled template has a
// backtick anywhere (checked below, when this module loads, and by the tests), and an
// email any of whose values has one is not personalized: it is sent on its own, as it
// was before batching. So every backtick of a shared body belongs to a token, no value
// brings one in, and once SendGrid has replaced them the copy has none left: its nested
// substitution (it substitutes again inside substituted text) finds nothing more.
//
// SendGrid's limits per personalization: 100 substitutions, 10,000 bytes of them (keys
// and values, UTF-8). An email past either is sent on its own.
import { escapeHtml, parsedEmailTemplate, plainText } from "./render.ts";
import { type EmailTemplateKey, emailTemplateKeys } from "./templates/sources.ts";
import { compiledTemplates } from "./templates/compiled.ts";
import { fillParsed, type TemplateValues, type ValueSource } from "./templates/syntax.ts";

export const TOKEN_DELIMITER = "`";
export const MAX_SUBSTITUTIONS = 100;
export const MAX_SUBSTITUTION_BYTES = 10_000;

/** An email's body with tokens for its values, and the values for those tokens. */
export interface PersonalizedEmail {
  html: string;
  text: string;
  substitutions: Readonly<Record<string, string>>;
}

/** Why an email cannot share a body, when it cannot: it is sent on its own. */
export type Unfit = { unfit: string };

// A template with the delimiter in its own text would make a token of it.
for (const key of emailTemplateKeys) {
  const { subject, html, text } = compiledTemplates[key];
  for (const [part, source] of [["subject", subject], ["HTML", html], ["text", text]] as const) {
    if (source.includes(TOKEN_DELIMITER)) {
      throw new Error(`the ${part} of ${key} has a ${TOKEN_DELIMITER}, which marks a substitution token in a batch`);
    }
  }
}

class UnfitValue extends Error {}

const utf8 = new TextEncoder();

/**
 * The email's HTML and text parts with a token for each value, and the values encoded for
 * their part; or why it cannot be sent that way. Throws TemplateError as fillEmailTemplate does.
 */
export function personalizeEmail(key: EmailTemplateKey, values: TemplateValues): PersonalizedEmail | Unfit {
  const template = parsedEmailTemplate(key);
  const substitutions: Record<string, string> = {};
  // A value's token is the same wherever its source shows it in a part, so a name shown
  // five times costs one substitution; numbered in the order of first appearance, so two
  // emails of one shape number theirs alike.
  const tokenizer = (part: "h" | "t", encode: (value: string) => string) => {
    const tokens = new Map<ValueSource, string>();
    return (value: string, source: ValueSource): string => {
      // An empty value needs no token; the body without it has another shape.
      if (value === "") return "";
      const known = tokens.get(source);
      if (known !== undefined) return known;
      if (value.includes(TOKEN_DELIMITER)) throw new UnfitValue(`the value of ${source} has a ${TOKEN_DELIMITER}`);
      const token = `${TOKEN_DELIMITER}${part}${tokens.size}${TOKEN_DELIMITER}`;
      tokens.set(source, token);
      substitutions[token] = encode(value);
      return token;
    };
  };
  let html: string;
  let text: string;
  try {
    html = fillParsed(template.html, values, tokenizer("h", escapeHtml));
    text = fillParsed(template.text, values, tokenizer("t", plainText));
  } catch (error) {
    if (error instanceof UnfitValue) return { unfit: error.message };
    throw error;
  }
  const entries = Object.entries(substitutions);
  if (entries.length > MAX_SUBSTITUTIONS) {
    return { unfit: `${entries.length} substitutions, more than SendGrid's ${MAX_SUBSTITUTIONS}` };
  }
  const bytes = substitutionBytes(substitutions);
  if (bytes > MAX_SUBSTITUTION_BYTES) {
    return { unfit: `${bytes} bytes of substitutions, more than SendGrid's ${MAX_SUBSTITUTION_BYTES}` };
  }
  return { html, text, substitutions };
}

/** The size SendGrid counts against its limit: every key and value, in UTF-8. */
export function substitutionBytes(substitutions: Readonly<Record<string, string>>): number {
  let bytes = 0;
  for (const [token, value] of Object.entries(substitutions)) {
    bytes += utf8.encode(token).length + utf8.encode(value).length;
  }
  return bytes;
}
