import { type CountMode, countModes } from "../db/pagination.ts";

// RFC 7240's Prefer header, parsed once for every preference the API honours:
// return=representation on writes (src/http/respond.ts), count= on lists.
//
// Preferences are separated by commas (several Prefer fields are one list); each is a
// name, optionally `=` and a value (a token or a quoted string), then parameters after
// semicolons, which no preference here takes. Names compare without regard to case, as
// the RFC says; so do values here, more leniently than it asks, since every value this
// API knows is a lowercase token. A preference given twice counts the first time only,
// and a preference the API does not know is ignored.
export function preferences(request: Request): Map<string, string> {
  const found = new Map<string, string>();
  const header = request.headers.get("prefer");
  if (header === null) return found;
  for (const preference of splitOutsideQuotes(header, ",")) {
    const [head = ""] = splitOutsideQuotes(preference, ";");
    const at = head.indexOf("=");
    const name = (at === -1 ? head : head.slice(0, at)).trim().toLowerCase();
    if (name === "" || found.has(name)) continue;
    found.set(name, at === -1 ? "" : unquote(head.slice(at + 1).trim()).toLowerCase());
  }
  return found;
}

// A quoted string may hold the separators; a backslash escapes the character after it.
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let part = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted && char === "\\" && i + 1 < text.length) {
      part += char + text[++i];
      continue;
    }
    if (char === '"') quoted = !quoted;
    if (char === separator && !quoted) {
      parts.push(part);
      part = "";
    } else {
      part += char;
    }
  }
  parts.push(part);
  return parts;
}

function unquote(value: string): string {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  return value.slice(1, -1).replace(/\\(.)/g, "$1");
}

// The count the request prefers, or null when it states none (or one the API does not
// know, which RFC 7240 has the server ignore): the list then counts exactly.
export function countPreference(request: Request): CountMode | null {
  const value = preferences(request).get("count");
  return countModes.find((mode) => mode === value) ?? null;
}
