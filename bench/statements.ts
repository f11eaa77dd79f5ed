// The API's statements as the bench runs them in SQL: taken from the code that builds them
// (the query functions, the request scopes), never written out by hand, so the SQL side
// of a comparison runs what the API runs, as it is at the commit measured.
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from "kysely";
import type { DB } from "../src/db/database.ts";

// A Kysely that runs nothing: it keeps each statement a query function sends and answers
// it with no rows. Its adapter and compiler are the pool's dialect's (kysely-postgres-js
// uses Kysely's own Postgres ones, as src/db/compile-once.ts says), so the text is the
// API's to the byte.
export function recordingDb(): { db: Kysely<DB>; statements: CompiledQuery[] } {
  const statements: CompiledQuery[] = [];
  const connection: DatabaseConnection = {
    executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
      statements.push(compiled);
      return Promise.resolve({ rows: [] });
    },
    streamQuery(): never {
      throw new Error("the bench's recording Kysely does not stream");
    },
  };
  const driver: Driver = {
    init: () => Promise.resolve(),
    acquireConnection: () => Promise.resolve(connection),
    beginTransaction: () => Promise.resolve(),
    commitTransaction: () => Promise.resolve(),
    rollbackTransaction: () => Promise.resolve(),
    releaseConnection: () => Promise.resolve(),
    destroy: () => Promise.resolve(),
  };
  const db = new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return { db, statements };
}

// The one statement `send` makes through a recording Kysely.
export async function statementOf(label: string, send: (db: Kysely<DB>) => Promise<unknown>): Promise<CompiledQuery> {
  const { db, statements } = recordingDb();
  await send(db);
  if (statements.length !== 1) throw new Error(`${label} sent ${statements.length} statements, not one`);
  return statements[0]!;
}

// A statement as a line of a pgbench script, and the variables it needs: each $n becomes
// the pgbench variable `:<prefix>n`, given the value the statement binds there, unless
// `expressions` has SQL for it. pgbench cannot build text, so a value that changes from
// one transaction to the next is built in SQL from a `\set` variable.
export type ScriptStatement = { line: string; variables: Record<string, string> };

export function scriptStatement(query: CompiledQuery, prefix: string, expressions: Record<number, string> = {}): ScriptStatement {
  const variables: Record<string, string> = {};
  query.parameters.forEach((value, at) => {
    if (expressions[at + 1] !== undefined) return;
    if (typeof value !== "string" && typeof value !== "number") {
      throw new Error(`parameter $${at + 1} is a ${typeof value}, which a pgbench variable cannot carry`);
    }
    variables[`${prefix}${at + 1}`] = String(value);
  });
  const line = query.sql.replace(/\$(\d+)/g, (_, n: string) => expressions[Number(n)] ?? `:${prefix}${n}`);
  return { line: `${line.trim()};`, variables };
}

// A pgbench script and its variables: `setup` (\set lines), then the statements, in order.
export type SqlScript = { text: string; variables: Record<string, string> };

export function sqlScript(setup: string[], statements: (ScriptStatement | "BEGIN" | "COMMIT")[]): SqlScript {
  const lines = statements.map((statement) => typeof statement === "string" ? `${statement};` : statement.line);
  const variables: Record<string, string> = {};
  for (const statement of statements) {
    if (typeof statement === "string") continue;
    for (const [name, value] of Object.entries(statement.variables)) {
      if (name in variables && variables[name] !== value) throw new Error(`two statements bind :${name} to different values`);
      variables[name] = value;
    }
  }
  return { text: [...setup, ...lines, ""].join("\n"), variables };
}

const SCRATCH = new URL("../.stack/bench/", import.meta.url);

// Each script written to a file of the bench's scratch folder for `work`, removed after.
export async function withScriptFiles<Name extends string, T>(
  scripts: Record<Name, SqlScript>,
  work: (paths: Record<Name, string>) => Promise<T>,
): Promise<T> {
  await Deno.mkdir(SCRATCH, { recursive: true });
  const paths = {} as Record<Name, string>;
  try {
    for (const name of Object.keys(scripts) as Name[]) {
      paths[name] = await Deno.makeTempFile({ dir: SCRATCH.pathname, prefix: "pgbench-", suffix: ".sql" });
      await Deno.writeTextFile(paths[name], scripts[name].text);
    }
    return await work(paths);
  } finally {
    for (const path of Object.values<string>(paths)) await Deno.remove(path).catch(() => {});
  }
}

export function withScriptFile<T>(script: SqlScript, work: (path: string) => Promise<T>): Promise<T> {
  return withScriptFiles({ script }, (paths) => work(paths.script));
}
