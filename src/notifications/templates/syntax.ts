// The placeholder language of every template part (subject, text and HTML), a
// small subset of Mustache:
//   {{name}}                 the value of name (a dotted path, like property.name)
//   {{#name}} ... {{/name}}  the block, only when name has a value (is not null);
//                            when the value is a list, the block once per item
//   {{^name}} ... {{/name}}  the block, only when name is null or an empty list
// Inside a list's block a name is looked up in the item first, then outside the
// list, so an item's row can say what the whole email says (a currency, a date).
// Lists are for what the data holds any number of, like the properties of a
// nightly summary: the template keeps the markup of a row and the encoding of its
// values (HTML-escaped in the HTML part), rather than code building HTML.
// A line holding nothing but section tags goes away whole, so an optional line
// leaves no blank line behind. There is no way to fall back on an empty string:
// a name the data does not provide, a null value outside its {{#name}} block, or a
// list used as a value, is a TemplateError, never a silently empty hole in an email.

/** A value: text, null for one the data does not have, or a list of items for a {{#name}} block to repeat. */
export type TemplateValue = string | null | readonly TemplateValues[];

export interface TemplateValues {
  readonly [name: string]: TemplateValue;
}

export class TemplateError extends Error {
  override name = "TemplateError";
}

type Node =
  | { kind: "text"; text: string }
  | { kind: "value"; name: string }
  | { kind: "section"; name: string; inverted: boolean; children: Node[] };

const namePattern = "[A-Za-z][A-Za-z0-9_]*(?:\\.[A-Za-z][A-Za-z0-9_]*)*";
const tagPattern = new RegExp(`\\{\\{\\s*([#^/]?)\\s*(${namePattern})\\s*\\}\\}`, "g");
const standaloneSectionLine = new RegExp(
  `^[ \\t]*((?:\\{\\{\\s*[#^/]\\s*${namePattern}\\s*\\}\\}[ \\t]*)+)\\r?\\n`,
  "gm",
);

/** A template's source, parsed and checked once, to fill any number of times. */
export type ParsedTemplate = readonly Node[];

/** Throws TemplateError. */
export function parseTemplate(source: string): ParsedTemplate {
  const prepared = source.replace(standaloneSectionLine, (_line, tags: string) => tags.replace(/[ \t]+$/, ""));
  const root: Node[] = [];
  const open: { name: string; children: Node[] }[] = [];
  let children = root;
  let at = 0;
  const addText = (text: string) => {
    const stray = text.indexOf("{{");
    if (stray >= 0) {
      throw new TemplateError(`malformed placeholder near "${text.slice(stray, stray + 40)}"`);
    }
    if (text) children.push({ kind: "text", text });
  };
  for (const match of prepared.matchAll(tagPattern)) {
    const [tag, sigil, name] = match as unknown as [string, string, string];
    addText(prepared.slice(at, match.index));
    at = match.index + tag.length;
    if (sigil === "#" || sigil === "^") {
      const section: Node = { kind: "section", name, inverted: sigil === "^", children: [] };
      children.push(section);
      open.push({ name, children });
      children = section.children;
    } else if (sigil === "/") {
      const closing = open.pop();
      if (!closing || closing.name !== name) {
        throw new TemplateError(`{{/${name}}} closes ${closing ? `{{#${closing.name}}}` : "no open section"}`);
      }
      children = closing.children;
    } else {
      children.push({ kind: "value", name });
    }
  }
  addText(prepared.slice(at));
  const unclosed = open.pop();
  if (unclosed) throw new TemplateError(`{{#${unclosed.name}}} is never closed`);
  return root;
}

// A scope a name is looked up in: the values at the top, or one item of a list, with
// where that item is ("properties.0", "properties.0/unpaid.1").
type Scope = { values: TemplateValues; path: string };

/**
 * Where a value came from, whatever the encoding: its name, after the path of the
 * list item that holds it ("name" at the top, "properties.1/name" in a list). Two
 * places that show one value have one source; two items' values have two.
 */
export type ValueSource = string;

// The innermost scope that has the name: a list's item, then what surrounds the list.
function lookup(scopes: readonly Scope[], name: string): { value: TemplateValue; source: ValueSource } {
  for (const scope of scopes) {
    if (Object.hasOwn(scope.values, name)) {
      return { value: scope.values[name] ?? null, source: scope.path ? `${scope.path}/${name}` : name };
    }
  }
  throw new TemplateError(`the template uses {{${name}}}, which the data does not provide`);
}

function fillScoped(nodes: ParsedTemplate, scopes: readonly Scope[], encode: Encode): string {
  let out = "";
  for (const node of nodes) {
    if (node.kind === "text") {
      out += node.text;
    } else if (node.kind === "value") {
      const { value, source } = lookup(scopes, node.name);
      if (value === null) {
        throw new TemplateError(`{{${node.name}}} has no value here: use it inside {{#${node.name}}}...{{/${node.name}}}`);
      }
      if (typeof value !== "string") {
        throw new TemplateError(`{{${node.name}}} is a list: repeat a block with {{#${node.name}}}...{{/${node.name}}}`);
      }
      out += encode(value, source);
    } else {
      const { value, source } = lookup(scopes, node.name);
      const empty = value === null || (typeof value !== "string" && value.length === 0);
      if (node.inverted) {
        if (empty) out += fillScoped(node.children, scopes, encode);
      } else if (typeof value === "string") {
        out += fillScoped(node.children, scopes, encode);
      } else if (value !== null) {
        value.forEach((item, index) => {
          out += fillScoped(node.children, [{ values: item, path: `${source}.${index}` }, ...scopes], encode);
        });
      }
    }
  }
  return out;
}

/** What a value becomes in the output: the value encoded for its part, or anything standing for it. */
export type Encode = (value: string, source: ValueSource) => string;

/** As fillTemplate, for a template parsed already. Throws TemplateError. */
export function fillParsed(nodes: ParsedTemplate, values: TemplateValues, encode: Encode): string {
  return fillScoped(nodes, [{ values, path: "" }], encode);
}

/** The template with every placeholder replaced by its value passed through encode. Throws TemplateError. */
export function fillTemplate(source: string, values: TemplateValues, encode: Encode): string {
  return fillParsed(parseTemplate(source), values, encode);
}

/** Every name a template refers to, in values and in sections, each once, sorted. Throws TemplateError. */
export function placeholderNames(source: string): string[] {
  const names = new Set<string>();
  const visit = (nodes: ParsedTemplate) => {
    for (const node of nodes) {
      if (node.kind === "text") continue;
      names.add(node.name);
      if (node.kind === "section") visit(node.children);
    }
  };
  visit(parseTemplate(source));
  return [...names].sort();
}
