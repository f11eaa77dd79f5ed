// The notifications worker itself: the sender-address setting unset disables email
// (run in-process, to see the warning it logs), the job's tenant is the only one
// its context can read, a worker that read a job and died leaves it to the next
// run, and the function refuses every caller without the service credential.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { withFixture } from "../support/api.ts";
import { createStay, stepReservation } from "../support/domain.ts";
import {
  callWorker,
  checkedIn,
  drainQueue,
  jobsFor,
  mail,
  notificationFor,
  partsOf,
  QUEUE,
  readNotification,
  runWorker,
  runWorkerInProcess,
  runWorkerUntilRead,
  sleep,
  sms,
  summary,
} from "../support/notifications.ts";
import { type Problem, stack } from "../support/stack.ts";

// ---------------------------------------------------------------- sender unset

Deno.test("the sender address unset: the worker logs a warning, sends nothing, and the notification is skipped with that reason", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("no-sender");
    const { pending } = await checkedIn(t.ownerClient);
    const [job] = await jobsFor(sql, pending.id);
    assert.ok(job, "the check-in's job is queued");

    const { run, logs } = await runWorkerInProcess({ email: { fromEmail: null } });
    assert.deepEqual(run, summary({ read: 1, skipped: 1 }));
    assert.deepEqual(logs, [{
      level: "warn",
      message: "email is disabled: the sender address (NOTIFICATIONS_FROM_EMAIL) is not set",
      fields: { notificationId: pending.id, tenantId: t.tenantId, msgId: job.msgId },
    }]);

    const skipped = await readNotification(t.ownerClient, pending.id);
    assert.deepEqual(skipped, {
      ...pending,
      status: "skipped",
      statusReason: "email is disabled: the sender address (NOTIFICATIONS_FROM_EMAIL) is not set",
      updatedAt: skipped.updatedAt,
      events: [],
    });
    assert.deepEqual(await mail.requests(), [], "SendGrid received nothing");
    assert.deepEqual(await jobsFor(sql, pending.id), [], "the job is done");
    assert.deepEqual(await runWorker(), summary({}), "nothing comes back");
  }));

Deno.test("the SendGrid API key unset: the same, with its own warning", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("no-key");
    const { pending } = await checkedIn(t.ownerClient);

    const { run, logs } = await runWorkerInProcess({ email: { apiKey: null } });
    assert.deepEqual(run, summary({ read: 1, skipped: 1 }));
    const reason = "email is disabled: the SendGrid API key (SENDGRID_API_KEY) is not set";
    assert.deepEqual(logs.map((line) => [line.level, line.message, line.fields?.notificationId]), [["warn", reason, pending.id]]);
    const skipped = await readNotification(t.ownerClient, pending.id);
    assert.deepEqual([skipped.status, skipped.statusReason, skipped.sentAt], ["skipped", reason, null]);
    assert.deepEqual(await mail.requests(), []);
  }));

// ---------------------------------------------------------------- tenant isolation

// What the worker's context for `tenantId` sees: background_worker with app.tenant_id,
// as the worker sets it for each job. Rolled back.
async function asWorkerOf<T>(sql: postgres.Sql, tenantId: string, work: (trx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  const rollback = new Error("rollback");
  let result: T | undefined;
  await sql.begin(async (trx) => {
    await trx`select set_config('app.tenant_id', ${tenantId}, true), set_config('role', 'background_worker', true)`;
    result = await work(trx);
    throw rollback;
  }).catch((error) => {
    if (error !== rollback) throw error;
  });
  return result as T;
}

Deno.test("two tenants' jobs in one run: each guest gets one email with their own tenant's content, and a tenant's worker context reads none of the other's rows", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const a = await tenant("isolation-a");
    const b = await tenant("isolation-b");
    const stayA = await checkedIn(a.ownerClient);
    const stayB = await checkedIn(b.ownerClient);
    // A job that names B's notification under A's tenant: the worker, in A's context,
    // must not find it.
    await sql`select pgmq.send(${QUEUE}, ${sql.json({ notificationId: stayB.pending.id, tenantId: a.tenantId })})`;

    assert.deepEqual(await runWorker(), summary({ read: 3, sent: 2, dropped: 1 }));

    const messages = await mail.messages();
    assert.equal(messages.length, 2, "one email per guest, B's not twice");
    for (const [own, other, tenantId] of [[stayA, stayB, a.tenantId], [stayB, stayA, b.tenantId]] as const) {
      const mine = messages.filter((m) => partsOf(m.body).to.includes(own.stay.guest.email!));
      assert.equal(mine.length, 1, `one email to ${own.stay.guest.email}`);
      const parts = partsOf(mine[0]!.body);
      assert.deepEqual(parts.customArgs, { notification_id: own.pending.id, tenant_id: tenantId });
      assert.equal(parts.subject, `Welcome to ${own.stay.property.name}, Ana`);
      for (const part of [parts.text, parts.html]) {
        assert.ok(part.includes(own.stay.property.name) && part.includes(own.stay.reservation.confirmationCode), "its own stay");
        for (const foreign of [other.stay.property.name, other.stay.reservation.confirmationCode, other.stay.unit.name, other.stay.guest.lastName]) {
          assert.ok(!part.includes(foreign), `nothing of the other tenant (${foreign})`);
        }
      }
      assert.equal((await readNotification(a.tenantId === tenantId ? a.ownerClient : b.ownerClient, own.pending.id)).status, "sent");
    }

    // The worker's context for A: A's rows, none of B's, and no write reaches B's.
    const seen = await asWorkerOf(sql, a.tenantId, async (trx) => {
      const tenantsOf = async (table: string) =>
        (await trx<{ tenant_id: string }[]>`select distinct tenant_id::text from ${trx(table)}`).map((row) => row.tenant_id);
      const tables = ["notifications", "reservations", "guests", "properties", "units"];
      const visible = Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await tenantsOf(table)])));
      const bNotification = await trx`select id from public.notifications where id = ${stayB.pending.id}`;
      const bReservation = await trx`select id from public.reservations where id = ${stayB.stay.reservation.id}`;
      const updated = await trx`update public.notifications set status_reason = 'from A' where id = ${stayB.pending.id}`;
      return { visible, bNotification: bNotification.length, bReservation: bReservation.length, updated: updated.count };
    });
    assert.deepEqual(seen, {
      visible: Object.fromEntries(["notifications", "reservations", "guests", "properties", "units"].map((table) => [table, [a.tenantId]])),
      bNotification: 0,
      bReservation: 0,
      updated: 0,
    });
    // And B's own context sees B's notification.
    const own = await asWorkerOf(sql, b.tenantId, (trx) => trx`select id from public.notifications where id = ${stayB.pending.id}`);
    assert.equal(own.length, 1);
  }));

// ---------------------------------------------------------------- crash recovery

Deno.test("a worker that read a batch and died: its jobs come back after the visibility timeout and the next run delivers each once", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("crash");
    const first = await checkedIn(t.ownerClient);
    const second = await checkedIn(t.ownerClient);

    // The dead worker: read with a one-second visibility timeout, never deleted.
    const read = await sql<{ msg_id: string; read_ct: number; message: { notificationId: string } }[]>`
      select msg_id::text, read_ct, message from pgmq.read(${QUEUE}, 1, 10)`;
    assert.deepEqual(read.map((row) => row.message.notificationId).sort(), [first.pending.id, second.pending.id].sort());
    assert.deepEqual(await runWorker(), summary({}), "invisible while the dead worker's timeout runs");

    await sleep(900);
    const { run } = await runWorkerUntilRead(5000);
    assert.deepEqual(run, summary({ read: 2, sent: 2 }));
    const messages = await mail.messages();
    assert.deepEqual(messages.map((m) => partsOf(m.body).customArgs.notification_id).sort(), [first.pending.id, second.pending.id].sort(),
      "each once");
    for (const { pending } of [first, second]) {
      assert.equal((await readNotification(t.ownerClient, pending.id)).status, "sent");
      assert.deepEqual(await jobsFor(sql, pending.id), []);
    }
    assert.deepEqual(await runWorker(), summary({}));
    assert.equal((await mail.messages()).length, 2, "still once each");
  }));

Deno.test("a job naming another tenant's notification, queued before the real job, does not stand in for it", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const a = await tenant("forged-first-a");
    const b = await tenant("forged-first-b");
    const stayB = await checkedIn(b.ownerClient);
    // The real job goes behind the forged one.
    await sql`select pgmq.delete(${QUEUE}, msg_id) from pgmq.q_notifications where message ->> 'notificationId' = ${stayB.pending.id}`;
    await sql`select pgmq.send(${QUEUE}, ${sql.json({ notificationId: stayB.pending.id, tenantId: a.tenantId })})`;
    await sql`select private.send_notification_job(${stayB.pending.id}::uuid, ${b.tenantId}::uuid)`;

    assert.deepEqual(await runWorker(), summary({ read: 2, sent: 1, dropped: 1 }));
    assert.equal((await readNotification(b.ownerClient, stayB.pending.id)).status, "sent");
    assert.equal((await mail.messages()).length, 1);
  }));

Deno.test("a second job for a notification already sent is dropped without a second email; a malformed job is archived", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("duplicate-job");
    const { pending } = await checkedIn(t.ownerClient);
    assert.deepEqual(await runWorker(), summary({ read: 1, sent: 1 }));
    const sent = await readNotification(t.ownerClient, pending.id);

    await sql`select private.send_notification_job(${pending.id}::uuid, ${t.tenantId}::uuid)`;
    assert.deepEqual(await runWorker(), summary({ read: 1, dropped: 1 }));
    assert.equal((await mail.requests()).length, 1, "no second request to SendGrid");
    assert.deepEqual(await readNotification(t.ownerClient, pending.id), sent, "the notification is as it was");
    assert.deepEqual(await jobsFor(sql, pending.id), []);

    const marker = crypto.randomUUID();
    await sql`select pgmq.send(${QUEUE}, ${sql.json({ notificationId: "not-a-uuid", marker })})`;
    assert.deepEqual(await runWorker(), summary({ read: 1, dropped: 1 }));
    const [archived] = await sql<{ count: number }[]>`
      select count(*)::int as count from pgmq.a_notifications where message ->> 'marker' = ${marker}`;
    assert.equal(archived!.count, 1, "kept in the archive for an operator to look at");
    assert.deepEqual(await runWorker(), summary({}));
  }));

Deno.test("two overlapping runs share the queue: every job is delivered once", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("overlap");
    const stays = [];
    for (let i = 0; i < 4; i++) stays.push(await checkedIn(t.ownerClient));
    await mail.script(...stays.map(() => ({ status: 202, delayMs: 200 })));

    const runs = await Promise.all([runWorker(), runWorker()]);
    const total = runs.reduce((sum, run) => summary({ read: sum.read + run.read, sent: sum.sent + run.sent }), summary({}));
    assert.deepEqual(total, summary({ read: 4, sent: 4 }));
    assert.deepEqual(runs.map((run) => run.read).sort(), runs.map((run) => run.sent).sort());
    const delivered = (await mail.messages()).map((m) => partsOf(m.body).customArgs.notification_id).sort();
    assert.deepEqual(delivered, stays.map(({ pending }) => pending.id).sort(), "each once");
  }));

Deno.test("a batch that takes longer than its visibility timeout: the next run does not send its unfinished jobs a second time", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("long-batch");
    const stays = [];
    for (let i = 0; i < 6; i++) stays.push(await checkedIn(t.ownerClient));
    // Each send takes 0.7 s: less than the one-second visibility timeout, as the worker's
    // settings ask ("longer than one job can take"). Claims of two are sent side by side,
    // so each claim takes 0.7 s, but the run's three claims, one at a time, take 2.1 s.
    await mail.script(...stays.map(() => ({ status: 202, delayMs: 700 })));

    const slow = runWorkerInProcess({ settings: { visibilityTimeoutSeconds: 1, claimSize: 2, claimsInFlight: 1 } });
    await sleep(1300);
    // The scheduler's next run, while the slow one is still at work.
    const next = await runWorker();
    const { run } = await slow;
    // A claim is taken only when the one before it is done: the runs share the six, none twice.
    assert.equal(run.read + next.read, 6, `the slow run: ${JSON.stringify(run)}, the next: ${JSON.stringify(next)}`);
    assert.equal(run.sent + next.sent, 6);
    assert.ok(next.read > 0, `the next run found jobs the slow run had not claimed yet: ${JSON.stringify(next)}`);

    const delivered = (await mail.messages()).map((m) => partsOf(m.body).customArgs.notification_id).sort();
    assert.deepEqual(delivered, stays.map(({ pending }) => pending.id).sort(),
      `each notification emailed once (the slow run: ${JSON.stringify(run)}, the next: ${JSON.stringify(next)})`);
    for (const { pending } of stays) assert.equal((await readNotification(t.ownerClient, pending.id)).status, "sent");
  }));

Deno.test("one claim of many jobs across tenants: each notification emailed once with its own tenant's content; a second job for one of them in the same claim is dropped", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const tenants = [await tenant("claim-a"), await tenant("claim-b"), await tenant("claim-c")];
    const stays: { tenantId: string; stay: Awaited<ReturnType<typeof checkedIn>> }[] = [];
    // Interleaved, as check-ins in several tenants arrive: no two consecutive jobs share a tenant.
    for (let round = 0; round < 3; round++) {
      for (const t of tenants) stays.push({ tenantId: t.tenantId, stay: await checkedIn(t.ownerClient) });
    }
    const twice = stays[4]!;
    await sql`select private.send_notification_job(${twice.stay.pending.id}::uuid, ${twice.tenantId}::uuid)`;

    assert.deepEqual(await runWorker(), summary({ read: 10, sent: 9, dropped: 1 }), "one run, one claim");

    const messages = await mail.messages();
    assert.equal(messages.length, 9, "nine emails, the twice-queued one once");
    for (const { tenantId, stay } of stays) {
      const mine = messages.filter((m) => partsOf(m.body).customArgs.notification_id === stay.pending.id);
      assert.equal(mine.length, 1, `one email for ${stay.pending.id}`);
      const parts = partsOf(mine[0]!.body);
      assert.deepEqual(parts.customArgs, { notification_id: stay.pending.id, tenant_id: tenantId });
      assert.deepEqual(parts.to, [stay.stay.guest.email]);
      assert.ok(parts.text.includes(stay.stay.property.name) && parts.text.includes(stay.stay.reservation.confirmationCode));
      const owner = tenants.find((t) => t.tenantId === tenantId)!.ownerClient;
      const sent = await readNotification(owner, stay.pending.id);
      assert.deepEqual([sent.status, sent.attempts, sent.subject], ["sent", 1, parts.subject]);
      assert.deepEqual(await jobsFor(sql, stay.pending.id), [], "its jobs are gone");
    }
    assert.deepEqual(await runWorker(), summary({}), "nothing comes back");
  }));

// ---------------------------------------------------------------- the service credential

function expectWorkerProblem(answer: Awaited<ReturnType<typeof callWorker>>, status: number, kind: string, label: string): Problem {
  assert.equal(answer.status, status, `${label}: ${answer.text}`);
  assert.equal(answer.headers.get("content-type"), "application/problem+json", label);
  const problem = answer.body as Problem;
  assert.deepEqual(Object.keys(problem).sort(), ["detail", "status", "title", "type"], label);
  assert.equal(problem.type, `urn:pms:problem:${kind}`, label);
  assert.equal(problem.status, status, label);
  assert.equal(typeof problem.detail, "string");
  return problem;
}

Deno.test("the worker refuses every caller without the service credential (401) and GET (405), and the queue is untouched", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("worker-auth");
    const { pending } = await checkedIn(t.ownerClient);
    const member = t.owner;

    const refused: [string, Record<string, string>][] = [
      ["no Authorization", {}],
      ["the anon key", { authorization: `Bearer ${stack.anonKey}` }],
      ["a signed-in user's token", { authorization: `Bearer ${member.token}` }],
      ["the service key in another scheme", { authorization: `Basic ${stack.serviceRoleKey}` }],
      ["the service key with a character less", { authorization: `Bearer ${stack.serviceRoleKey.slice(0, -1)}` }],
    ];
    for (const [label, headers] of refused) {
      expectWorkerProblem(await callWorker(headers), 401, "unauthorized", label);
      expectWorkerProblem(await callWorker(headers, "GET"), 401, "unauthorized", `GET with ${label}`);
    }
    const get = await callWorker({ authorization: `Bearer ${stack.serviceRoleKey}` }, "GET");
    expectWorkerProblem(get, 405, "method-not-allowed", "GET with the key");
    assert.equal(get.headers.get("allow"), "POST");

    const [job] = await jobsFor(sql, pending.id);
    assert.ok(job, "the job is still on the queue");
    assert.equal(job.readCount, 0, "never read");
    assert.ok(job.secondsLeft <= 0, "and visible");
    assert.equal((await readNotification(t.ownerClient, pending.id)).status, "pending");
    assert.deepEqual(await mail.requests(), []);
    assert.deepEqual(await sms.requests(), []);

    assert.deepEqual(await runWorker(), summary({ read: 1, sent: 1 }), "with the key, it runs");
  }));

Deno.test("claims in flight side by side: a run takes two claims at once, and each job is sent once", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("in-flight");
    const stays = [];
    for (let i = 0; i < 4; i++) stays.push(await checkedIn(t.ownerClient));
    // Sends of 300 ms and a budget of 100 ms: one claim at a time would take two jobs
    // (as the test below shows); two in flight take both claims before the budget ends.
    await mail.script(...stays.map(() => ({ status: 202, delayMs: 300 })));
    const { run } = await runWorkerInProcess({ settings: { claimSize: 2, claimsInFlight: 2, runBudgetMs: 100 } });
    assert.deepEqual({ read: run.read, sent: run.sent }, { read: 4, sent: 4 }, JSON.stringify(run));
    const delivered = (await mail.messages()).map((m) => partsOf(m.body).customArgs.notification_id).sort();
    assert.deepEqual(delivered, stays.map(({ pending }) => pending.id).sort(), "each once");
  }));

Deno.test("a run drains claim after claim until the queue is empty, and claims nothing more once its time budget is spent", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("budget");
    const stays = [];
    for (let i = 0; i < 5; i++) stays.push(await checkedIn(t.ownerClient));

    // Claims of two, one at a time: one run takes all five in three claims.
    const { run: drained } = await runWorkerInProcess({ settings: { claimSize: 2, claimsInFlight: 1 } });
    assert.deepEqual({ read: drained.read, sent: drained.sent }, { read: 5, sent: 5 }, JSON.stringify(drained));

    // Each send takes 300 ms and the budget is 100 ms: the first claim is worked, no second is taken.
    const more = [];
    for (let i = 0; i < 4; i++) more.push(await checkedIn(t.ownerClient));
    await mail.script(...more.map(() => ({ status: 202, delayMs: 300 })));
    const { run: budgeted } = await runWorkerInProcess({ settings: { claimSize: 2, claimsInFlight: 1, runBudgetMs: 100 } });
    assert.deepEqual({ read: budgeted.read, sent: budgeted.sent }, { read: 2, sent: 2 }, JSON.stringify(budgeted));
    const rest = await runWorker();
    assert.deepEqual({ read: rest.read, sent: rest.sent }, { read: 2, sent: 2 }, JSON.stringify(rest));
    for (const { pending } of [...stays, ...more]) assert.equal((await readNotification(t.ownerClient, pending.id)).status, "sent");
  }));

Deno.test("a run that follows the queue takes a job enqueued while it runs and ends when its budget is spent; a caller's run ends when the queue is empty", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("follow");
    const budgetMs = 1500;

    const emptyStarted = performance.now();
    const { run: empty } = await runWorkerInProcess({ settings: { runBudgetMs: budgetMs } });
    assert.equal(empty.read, 0);
    assert.ok(performance.now() - emptyStarted < budgetMs, "a caller's run on an empty queue does not wait");

    const started = performance.now();
    const following = runWorkerInProcess({ follow: true, settings: { runBudgetMs: budgetMs, followPollMs: 100 } });
    // The check-in's notification is not looked at while the run follows: it may be sent
    // before it could be read as pending. Both are settled before anything is asserted,
    // so that a failure leaves no run behind to take the next test's jobs.
    const checkIn = (async () => {
      await sleep(300);
      const stay = await createStay(t.ownerClient, { status: "confirmed" });
      await stepReservation(t.ownerClient, stay.reservation.id, "check-in");
      return stay;
    })();
    const [followed, checkedInStay] = await Promise.allSettled([following, checkIn]);
    if (followed.status === "rejected") throw followed.reason;
    if (checkedInStay.status === "rejected") throw checkedInStay.reason;
    const { run } = followed.value;
    const tookMs = performance.now() - started;
    assert.deepEqual({ read: run.read, sent: run.sent }, { read: 1, sent: 1 }, JSON.stringify(run));
    assert.ok(tookMs >= budgetMs, `it followed the queue until its budget was spent (${tookMs.toFixed(0)} ms)`);
    const notification = await notificationFor(t.ownerClient, checkedInStay.value.reservation.id, "checkin_reminder");
    assert.equal(notification.status, "sent");
  }));

Deno.test("the worker's run request: no body or {} drains, {\"follow\": true} follows, anything else is a 400 that runs nothing", () =>
  withFixture(async ({ sql, tenant }) => {
    await drainQueue(sql);
    const t = await tenant("run-request");
    const { pending } = await checkedIn(t.ownerClient);
    const key = { authorization: `Bearer ${stack.serviceRoleKey}` };
    const asJson = { ...key, "content-type": "application/json" };
    const refused = async (body: string, headers: Record<string, string>, status: number, kind: string, field?: string) => {
      const answer = await callWorker(headers, "POST", body);
      assert.equal(answer.status, status, `${body}: ${answer.text}`);
      const problem = answer.body as Problem & { errors?: { path: string }[] };
      assert.equal(problem.type, `urn:pms:problem:${kind}`, body);
      if (field) assert.deepEqual(problem.errors?.map((error) => error.path), [field], body);
    };
    await refused('{"follow": "yes"}', asJson, 400, "validation", "follow");
    await refused('{"later": true}', asJson, 400, "validation", "later");
    await refused("{", asJson, 400, "malformed-json");
    await refused("follow", key, 415, "unsupported-media-type");
    const [job] = await jobsFor(sql, pending.id);
    assert.equal(job?.readCount, 0, "no refused request ran the worker");
    const ran = await callWorker(asJson, "POST", "{}");
    assert.equal(ran.status, 200, ran.text);
    assert.equal((ran.body as { read: number }).read, 1);
  }));
