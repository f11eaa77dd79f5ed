// Compiles the notification email templates' MJML to HTML, at build time, and
// writes the one generated module the worker reads, with the SMS texts beside the
// emails: src/notifications/templates/compiled.ts (commit it). The worker never
// runs MJML and reads no template file.
//
//   npm run templates:build
//
// MJML comes from node_modules (the version pinned in package.json and locked in
// package-lock.json, so it works offline once npm install has run), loaded by the
// repository's Deno with --node-modules-dir=manual. Per template key, compiled.ts
// holds the subject, the text part, the compiled HTML and a SHA-256 of the
// sources and the MJML version they were compiled with; test/notifications
// checks that hash against the sources, so a source edited without a rebuild
// fails the tests. Per SMS key it holds the SMS text as it is, which the tests
// compare with its file.
import mjml2html from "mjml";
import {
  type EmailTemplateKey,
  emailTemplateKeys,
  hashSources,
  sourceFileNames,
  smsSourceFileName,
  type SmsTemplateKey,
  smsTemplateKeys,
  type TemplateSources,
} from "../src/notifications/templates/sources.ts";
import { placeholderNames } from "../src/notifications/templates/syntax.ts";

const root = new URL("../", import.meta.url);
const templatesDir = new URL("src/notifications/templates/", root);
const output = new URL("compiled.ts", templatesDir);

type Compile = (mjml: string, options: Record<string, unknown>) => Promise<{ html: string; errors: unknown[] }>;
const compile = mjml2html as unknown as Compile;

async function readJson(url: URL): Promise<Record<string, unknown>> {
  return JSON.parse(await Deno.readTextFile(url));
}

async function mjmlVersion(): Promise<string> {
  const pinned = ((await readJson(new URL("package.json", root))).dependencies as Record<string, string>)?.mjml;
  const installed = (await readJson(new URL("node_modules/mjml/package.json", root))).version;
  if (!pinned || installed !== pinned) {
    throw new Error(`package.json pins mjml ${pinned}, node_modules has ${installed}: run npm install first`);
  }
  return pinned;
}

// What MJML must keep of the placeholders: every section tag (MJML drops text it
// does not expect, like a section tag between two components) and every value
// name (a value may appear more often: the title is also the body's aria-label).
function placeholdersKept(source: string): string {
  const tags = [...source.matchAll(/\{\{\s*([#^/]?)\s*([^}\s]*)\s*\}\}/g)].map((match) => `${match[1]}${match[2]}`);
  const sections = tags.filter((tag) => /^[#^/]/.test(tag)).sort();
  const values = [...new Set(tags.filter((tag) => !/^[#^/]/.test(tag)))].sort();
  return `sections ${sections.join(" ")}; values ${values.join(" ")}`;
}

async function build(key: EmailTemplateKey, version: string) {
  const files = sourceFileNames(key);
  const sources: TemplateSources = {
    subject: await Deno.readTextFile(new URL(files.subject, templatesDir)),
    text: await Deno.readTextFile(new URL(files.text, templatesDir)),
    mjml: await Deno.readTextFile(new URL(files.mjml, templatesDir)),
  };
  const fail = (file: string, message: string) => {
    throw new Error(`src/notifications/templates/${file}: ${message}`);
  };

  const subject = sources.subject.replace(/\r?\n$/, "");
  if (!subject.trim() || /[\r\n]/.test(subject)) fail(files.subject, "the subject must be one non-empty line");
  placeholderNames(sources.text);

  const { html: compiled, errors } = await compile(sources.mjml, {
    validationLevel: "strict", // any MJML error throws
    fonts: {}, // no web font links: nothing in an email loads from elsewhere
    keepComments: false,
    filePath: new URL(files.mjml, templatesDir).pathname,
  });
  if (errors.length > 0) fail(files.mjml, JSON.stringify(errors));
  // The XHTML namespace is not a resource and HTML parsers ignore it; dropping it
  // leaves the output with no http(s) URL at all, which the tests then require.
  const html = compiled.replace(' xmlns="http://www.w3.org/1999/xhtml"', "");
  const remote = /\bhttps?:\/\/[^\s"'<>)]*/i.exec(html);
  if (remote) fail(files.mjml, `the compiled HTML refers to ${remote[0]}: no remote URLs, images or fonts`);
  placeholderNames(html);
  const expected = placeholdersKept(sources.mjml);
  const kept = placeholdersKept(html);
  if (kept !== expected) fail(files.mjml, `MJML changed the placeholders: source ${expected}; compiled ${kept}`);

  return { sourceHash: await hashSources(sources, version), subject, text: sources.text, html };
}

// An SMS text goes as it is: only its placeholders are checked here.
async function buildSms(key: SmsTemplateKey): Promise<string> {
  const file = smsSourceFileName(key);
  const text = await Deno.readTextFile(new URL(file, templatesDir));
  if (!text.trim()) throw new Error(`src/notifications/templates/${file}: the SMS text is empty`);
  placeholderNames(text);
  return text;
}

// A template literal keeps the generated HTML line by line, so its diffs read.
function literal(value: string): string {
  return "`" + value.replace(/\\/g, "\\\\").replace(/`/g, "\\`").replace(/\$\{/g, "\\${") + "`";
}

const version = await mjmlVersion();
let module = `// Generated by scripts/build-templates.ts from the .mjml, .txt, .subject.txt and
// .sms.txt sources beside this file, with MJML ${version}. Do not edit: change a
// source, then run \`npm run templates:build\` and commit this file with it.
import type { EmailTemplateKey, SmsTemplateKey } from "./sources.ts";

export interface CompiledTemplate {
  /** SHA-256 of the sources and the MJML version this was compiled from (see hashSources). */
  sourceHash: string;
  subject: string;
  text: string;
  html: string;
}

export const mjmlVersion = ${JSON.stringify(version)};

export const compiledTemplates: Readonly<Record<EmailTemplateKey, CompiledTemplate>> = {
`;
for (const key of emailTemplateKeys) {
  const template = await build(key, version);
  module += `  ${key}: {
    sourceHash: ${JSON.stringify(template.sourceHash)},
    subject: ${JSON.stringify(template.subject)},
    text: ${literal(template.text)},
    html: ${literal(template.html)},
  },
`;
}
module += `};

/** The SMS texts, as their .sms.txt files hold them. */
export const smsTemplates: Readonly<Record<SmsTemplateKey, string>> = {
`;
for (const key of smsTemplateKeys) {
  module += `  ${key}: ${literal(await buildSms(key))},
`;
}
module += "};\n";
await Deno.writeTextFile(output, module);
console.log(
  `wrote src/notifications/templates/compiled.ts (emails ${emailTemplateKeys.join(", ")}; SMS ${smsTemplateKeys.join(", ")}) ` +
    `with MJML ${version}`,
);
