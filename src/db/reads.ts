import type { Kysely } from "kysely";
import type { ReadonlyKysely } from "kysely/readonly";
import type { DB } from "./database.ts";

// What a GET handler, and every query function it calls, is given to query with: reads,
// each of which may be a transaction of its own. A tenant route's GET goes statement by
// statement (src/db/pipelined-transactions.ts): each statement is BEGIN, the request's
// context, the statement and COMMIT, so each sees the tenant, the role and the claims, and
// RLS applies to it, but nothing carries from one statement to the next. Another request's
// write committed between two of them is seen by the second (as under read committed in
// one transaction); a row lock taken by one is gone before the next; now() moves; a setting
// made by one is not there for the next. test/db/reads.test.ts shows each of these on
// the database.
//
// So a read has nothing to write with: only selects (selectFrom, selectNoFrom), a
// compiled statement (executeQuery, for compileOnce's) and `sql` templates (getExecutor,
// for sql`...`.execute(db)). Not insertInto, updateTable, deleteFrom, mergeInto or
// replaceInto, and no transaction(): a read-modify-write has nowhere to go, and the
// compiler says so. Nor `with`: what it returns inserts, updates and deletes, and so
// does the query creator its expression is built with (a data-modifying WITH).
// A compiled statement or an `sql` template is text the compiler cannot read: one that
// writes, sent through a read, commits on its own, whatever the read does next.
//
// The selects are Kysely's own read-only ones (kysely/readonly). Its ReadonlyKysely as a
// whole is not used: it refuses getExecutor, which the reads' `sql` templates need, and
// a Transaction<DB> is not assignable to it (its writers and its `with` answer type
// errors there), while a write must be able to call the queries a read calls. So a
// Transaction<DB> is a Reads; a Reads is no Transaction<DB>.
export type Reads = Pick<ReadonlyKysely<DB>, "selectFrom" | "selectNoFrom"> & Pick<Kysely<DB>, "executeQuery" | "getExecutor">;
