// supabase/schemas holds the database's wanted state, one file per capability, each object
// defined once (docs/architecture.md, Migrations). These checks read the files only;
// test/local/schemas.test.ts builds a database from them and compares it with the chain's.
import assert from "node:assert/strict";
import { parse } from "smol-toml";

const root = new URL("../../", import.meta.url);
const schemasFolder = new URL("supabase/schemas/", root);

// The section header under which a file keeps what a schema diff does not write.
const byHandSection = "not in a schema diff";

async function schemaFiles(): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(schemasFolder)) {
    if (entry.isFile && entry.name.endsWith(".sql")) names.push(entry.name);
  }
  return names.sort();
}

async function listedSchemaPaths(): Promise<unknown> {
  const config = parse(await Deno.readTextFile(new URL("supabase/config.toml", root))) as {
    db?: { migrations?: { schema_paths?: unknown } };
  };
  return config.db?.migrations?.schema_paths;
}

// The file's text without its comments and without the bodies of its dollar-quoted
// strings (function bodies, DO blocks), each replaced by a space, so that only the
// statements themselves are left to read.
function statementsOnly(sql: string): string {
  let out = "";
  let i = 0;
  while (i < sql.length) {
    if (sql.startsWith("--", i)) {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end;
      continue;
    }
    const quote = sql[i];
    if (quote === "'" || quote === '"') {
      // A string or a quoted name (a policy's: "managers read their keys' request windows").
      const end = sql.indexOf(quote, i + 1);
      assert.ok(end !== -1, `an unterminated ${quote} quote`);
      out += sql.slice(i, end + 1);
      i = end + 1;
      continue;
    }
    const tag = /^\$[A-Za-z_0-9]*\$/.exec(sql.slice(i))?.[0];
    if (tag) {
      const end = sql.indexOf(tag, i + tag.length);
      assert.ok(end !== -1, `an unterminated ${tag} quote`);
      out += " ";
      i = end + tag.length;
      continue;
    }
    out += sql[i];
    i += 1;
  }
  return out;
}

// What each `create` in the text defines: "function private.x", "trigger t on public.y", ...
// Function and procedure names stand without their arguments: the schema overloads none.
function definitions(sql: string): string[] {
  const found: string[] = [];
  for (const statement of statementsOnly(sql).toLowerCase().replace(/\s+/g, " ").split(";")) {
    const match = /^ ?create (?:or replace )?(?:unique )?(?:unlogged )?(?:constraint )?(function|procedure|table|view|trigger|policy|index|type) (?:if not exists )?("[^"]+"|[\w.]+)/
      .exec(statement);
    if (!match) continue;
    const [, kind, name] = match;
    if (kind === "trigger" || kind === "policy") {
      // Their names repeat across tables: the table is part of what they are.
      const table = / on ([\w."]+)/.exec(statement.slice(match[0].length))?.[1];
      assert.ok(table, `${kind} ${name} names no table`);
      found.push(`${kind} ${name} on ${table}`);
    } else {
      found.push(`${kind} ${name}`);
    }
  }
  return found;
}

Deno.test("config.toml's schema_paths lists every schema file, once each", async () => {
  const listed = await listedSchemaPaths();
  assert.ok(Array.isArray(listed), "supabase/config.toml has [db.migrations] schema_paths");
  const files = listed.map((path) => String(path).replace(/^\.\/schemas\//, ""));
  assert.deepEqual(listed.filter((path) => !String(path).startsWith("./schemas/")), [],
    "each path is a file of supabase/schemas, as ./schemas/<name>.sql");
  assert.deepEqual(files.filter((file, i) => files.indexOf(file) !== i), [], "no file is listed twice");
  assert.deepEqual([...files].sort(), await schemaFiles(), "the list and the folder hold the same files");
});

Deno.test("every function, table, view, trigger, policy, index and type is defined in one schema file, once", async () => {
  const where = new Map<string, string[]>();
  for (const file of await schemaFiles()) {
    for (const definition of definitions(await Deno.readTextFile(new URL(file, schemasFolder)))) {
      where.set(definition, [...(where.get(definition) ?? []), file]);
    }
  }
  assert.ok(where.size > 300, `only ${where.size} definitions read: the reading is broken`);
  const repeated = [...where].filter(([, files]) => files.length > 1).map(([definition, files]) => `${definition}: ${files.join(", ")}`);
  assert.deepEqual(repeated, []);
});

Deno.test("the once rule reads the definitions themselves, not comments or bodies", () => {
  const a = "create or replace function private.f() returns int language sql as $$ select 1 $$;\n" +
    "-- create table public.in_a_comment (id int);\n" +
    "create trigger t before update on public.x for each row execute function private.f();\n" +
    "create policy \"members read\" on public.x for select using (true);\n" +
    "do $$ begin execute 'create table public.in_a_body (id int)'; end $$;\n";
  assert.deepEqual(definitions(a), [
    "function private.f",
    "trigger t on public.x",
    'policy "members read" on public.x',
  ]);
  assert.deepEqual(definitions("create unique index if not exists i on public.x (id);\ncreate unlogged table public.y (id int);"),
    ["index i", "table public.y"]);
});

Deno.test("roles, role settings, queues and schedules stand under a section a schema diff does not write", async () => {
  const handWritten = /\bcreate role\b|\balter role\b|\bgrant (background_worker|api_integration|provider_webhook) to\b|\bpgmq\.create\(|\bcron\.(schedule|alter_job|unschedule)\(/g;
  const misplaced: string[] = [];
  for (const file of await schemaFiles()) {
    const sql = await Deno.readTextFile(new URL(file, schemasFolder));
    const lines = sql.split("\n");
    const headers = [...sql.matchAll(/^-- -{20,} (.+)$/gm)].map((m) => ({ at: m.index, title: (m[1] ?? "").trim() }));
    for (const match of sql.matchAll(handWritten)) {
      const line = sql.slice(0, match.index).split("\n").length;
      if (/^\s*--/.test(lines[line - 1] ?? "")) continue;
      const section = headers.filter((h) => h.at < match.index).at(-1);
      if (section?.title !== byHandSection) misplaced.push(`${file}:${line}: ${match[0]}`);
    }
  }
  assert.deepEqual(misplaced, []);
});
