// The transactional emails' template keys and where each one's sources live.
// Beside this file, per key: <key>.mjml (the HTML part, compiled to HTML by
// scripts/build-templates.ts), <key>.txt (the plain-text part) and
// <key>.subject.txt (the subject, one line). compiled.ts records, per key, a
// SHA-256 of these sources and of the MJML version that compiled them, so a test
// can tell when the compiled output is older than its sources.

export const templateKeys = [
  "checkin_reminder",
  "checkout_summary",
  "reservation_cancelled",
  "access_code_delivery",
] as const;

export type TemplateKey = typeof templateKeys[number];

export function isTemplateKey(value: string): value is TemplateKey {
  return (templateKeys as readonly string[]).includes(value);
}

export interface TemplateSources {
  subject: string;
  text: string;
  mjml: string;
}

/** The source files of one key, relative to this folder. */
export function sourceFileNames(key: TemplateKey): Record<keyof TemplateSources, string> {
  return { subject: `${key}.subject.txt`, text: `${key}.txt`, mjml: `${key}.mjml` };
}

/**
 * SHA-256 (hex) over the MJML version and the three sources, each part
 * length-prefixed so that no two different inputs share an encoding.
 */
export async function hashSources(sources: TemplateSources, mjmlVersion: string): Promise<string> {
  const parts: [string, string][] = [
    ["mjml-version", mjmlVersion],
    ["subject", sources.subject],
    ["text", sources.text],
    ["mjml", sources.mjml],
  ];
  const encoded = parts.map(([name, value]) => `${name} ${value.length}\n${value}\n`).join("");
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(encoded));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}
