// A released migration never changes: a database may have applied it, and `supabase db
// push` never runs a version it has recorded again, so an edit would reach no database
// that had it. supabase/released-migrations.sha256 records each released migration's
// sha256 under its version, and CHANGELOG.md has an entry per version naming its last
// migration (docs/architecture.md, Migrations).
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url);
const migrationsFolder = new URL("supabase/migrations/", root);

type Released = { version: string; sha256: string; file: string };

function parseRecord(text: string): Released[] {
  const released: Released[] = [];
  let version: string | undefined;
  for (const [i, line] of text.split("\n").entries()) {
    const heading = /^# (\d+\.\d+\.\d+)$/.exec(line);
    if (heading) {
      version = heading[1];
      continue;
    }
    if (line === "" || line.startsWith("#")) continue;
    const entry = /^([0-9a-f]{64}) {2}(\d{14}_[a-z0-9_]+\.sql)$/.exec(line);
    assert.ok(entry, `line ${i + 1} is "<sha256>  <file>": ${line}`);
    assert.ok(version, `line ${i + 1} comes before any "# <version>" line`);
    released.push({ version, sha256: entry[1] ?? "", file: entry[2] ?? "" });
  }
  return released;
}

async function record(): Promise<Released[]> {
  return parseRecord(await Deno.readTextFile(new URL("supabase/released-migrations.sha256", root)));
}

async function migrationFiles(): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(migrationsFolder)) {
    if (entry.isFile && entry.name.endsWith(".sql")) names.push(entry.name);
  }
  return names.sort();
}

async function sha256(url: URL): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(url));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

function versionKey(version: string): number[] {
  return version.split(".").map(Number);
}

function before(a: string, b: string): boolean {
  const [x, y] = [versionKey(a), versionKey(b)];
  for (let i = 0; i < 3; i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
  }
  return false;
}

Deno.test("every released migration is as it was released", async () => {
  const released = await record();
  assert.ok(released.length > 0, "the record names released migrations");
  const changed: string[] = [];
  for (const { file, sha256: recorded, version } of released) {
    const url = new URL(file, migrationsFolder);
    const actual = await Deno.stat(url).then(() => sha256(url), () => "gone");
    if (actual !== recorded) changed.push(`${file} (released in ${version}): ${actual === "gone" ? "gone" : "changed"}`);
  }
  assert.deepEqual(changed, [], "a released migration is never edited or removed: a change is a new migration");
});

Deno.test("releases follow one another, each with its migrations in the order they apply", async () => {
  const released = await record();
  const files = released.map((r) => r.file);
  assert.deepEqual(files, [...files].sort(), "the record lists migrations in the order they apply");
  assert.deepEqual(files.filter((file, i) => files.indexOf(file) !== i), [], "each migration is released once");
  const versions = [...new Set(released.map((r) => r.version))];
  versions.slice(1).forEach((version, i) =>
    assert.ok(before(versions[i] ?? "", version), `${version} comes after ${versions[i]}`)
  );
});

Deno.test("a migration not yet released applies after every released one", async () => {
  const released = new Set((await record()).map((r) => r.file));
  const last = [...released].sort().at(-1) ?? "";
  const early = (await migrationFiles()).filter((file) => !released.has(file) && file < last);
  assert.deepEqual(early, [], `a new migration sorts after ${last}, the last released one`);
});

Deno.test("CHANGELOG.md has an entry for each release, naming its last migration", async () => {
  const changelog = await Deno.readTextFile(new URL("CHANGELOG.md", root));
  const entries = new Map<string, string>();
  for (const part of changelog.split(/^## /m).slice(1)) {
    const heading = part.split("\n", 1)[0] ?? "";
    entries.set(heading.trim(), part);
  }
  const lastOf = new Map<string, string>();
  for (const { version, file } of await record()) lastOf.set(version, file);
  for (const [version, file] of lastOf) {
    const entry = entries.get(version);
    assert.ok(entry, `CHANGELOG.md has "## ${version}"`);
    assert.ok(entry.includes(`Last migration: \`${file}\``), `the ${version} entry names its last migration, ${file}`);
  }
  // A release that brought no migration of its own names the last one released before it.
  const allReleased = new Set((await record()).map((r) => r.file));
  for (const [heading, entry] of entries) {
    if (heading === "Unreleased") continue;
    assert.match(heading, /^\d+\.\d+\.\d+$/, `"## ${heading}" is a version or "Unreleased"`);
    const named = /Last migration: `([^`]+)`/.exec(entry)?.[1];
    assert.ok(named && allReleased.has(named), `the ${heading} entry names a released migration as its last`);
  }
});
