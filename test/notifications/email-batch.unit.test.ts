// How a claim's emails are put into requests and what becomes of each: grouped by template
// and shape, at most 1,000 a request and each address once, invalid addresses failed
// before any request, a refusal split down to the email refused, and one answer (accepted,
// throttled, refused for all) for every email of a request. Against a provider double in
// this process; test/notifications/batching.test.ts sends through the stack's SendGrid double.
import assert from "node:assert/strict";
import type { BatchDelivery, Delivery, EmailAdapter, OutgoingBatch, OutgoingMessage } from "../../src/notifications/delivery.ts";
import { batchOf, deliverEmails, planEmails, type PreparedEmail } from "../../src/notifications/email-batch.ts";

// An email of `template`, to `to`, whose body is shared by every email of the same `shape`.
function email(to: string, options: { template?: string; shape?: string; alone?: boolean; id?: string } = {}): PreparedEmail {
  const template = options.template ?? "checkin_reminder";
  const shape = options.shape ?? "a";
  const message: OutgoingMessage = {
    notificationId: options.id ?? `n-${to}`,
    tenantId: "t-1",
    templateKey: template,
    to,
    subject: `Welcome, ${to}`,
    html: `<p>Hi ${to}</p>`,
    text: `Hi ${to}`,
  };
  return {
    message,
    personalized: options.alone ? null : { html: `<p>${shape}: \`h0\`</p>`, text: `${shape}: \`t0\``, substitutions: { "`h0`": to, "`t0`": to } },
  };
}

// A provider that answers each request by `answer`, and keeps every request it was sent.
function provider(answer: (request: OutgoingBatch | OutgoingMessage) => BatchDelivery | Promise<BatchDelivery>) {
  const requests: (OutgoingBatch | OutgoingMessage)[] = [];
  let next = 0;
  const accepted = (): Delivery => ({ outcome: "accepted", providerMessageId: `msg-${next++}` });
  const adapter: EmailAdapter = {
    disabledReason: null,
    async send(message) {
      requests.push(message);
      const delivery = await answer(message);
      if (delivery.outcome === "refused") return { outcome: "permanent", reason: delivery.reason };
      return delivery.outcome === "accepted" ? accepted() : delivery;
    },
    async sendBatch(batch) {
      requests.push(batch);
      const delivery = await answer(batch);
      return delivery.outcome === "accepted" ? accepted() : delivery;
    },
  };
  return { adapter, requests };
}

const recipientsOf = (request: OutgoingBatch | OutgoingMessage) => "recipients" in request ? request.recipients.map((r) => r.to) : [request.to];
const accept: BatchDelivery = { outcome: "accepted", providerMessageId: null };

Deno.test("emails of one template and shape go in one request; another template, another shape or no shared body, apart", () => {
  const emails = [
    email("a@x.example"), email("b@x.example"), email("c@x.example", { shape: "b" }), email("d@x.example"),
    email("e@x.example", { template: "checkout_summary" }), email("f@x.example", { alone: true }), email("g@x.example", { shape: "b" }),
  ];
  assert.deepEqual(planEmails(emails), { invalid: [], alone: [5, 4], batches: [[0, 1, 3], [2, 6]] });
});

Deno.test("at most 1,000 emails a request", () => {
  const many = Array.from({ length: 2500 }, (_, i) => email(`guest${i}@x.example`));
  assert.deepEqual(planEmails(many).batches.map((batch) => batch.length), [1000, 1000, 500]);
  assert.deepEqual(planEmails(many.slice(0, 5), 2).batches, [[0, 1], [2, 3]]);
  assert.deepEqual(planEmails(many.slice(0, 5), 2).alone, [4], "a request of one is an email on its own");
});

Deno.test("each address once a request, whatever its letters' case: a second and third email to it wait for requests of their own", () => {
  const twice = [email("ana@x.example", { id: "1" }), email("ben@x.example"), email("ANA@x.example", { id: "2" }), email("cy@x.example")];
  assert.deepEqual(planEmails(twice).batches, [[0, 1, 3]]);
  assert.deepEqual(planEmails(twice).alone, [2]);
  const thrice = [...twice, email("ana@x.example", { id: "3" }), email("dee@x.example")];
  assert.deepEqual(planEmails(thrice).batches, [[0, 1, 3, 5]], "ana's other two cannot share a request either");
  assert.deepEqual(planEmails(thrice).alone, [2, 4]);
});

Deno.test("an address SendGrid would refuse fails before any request, with the reason; its neighbours go", async () => {
  const emails = [email("ana@x.example"), email("ana..silva@x.example"), email("ben@x.example")];
  assert.deepEqual(planEmails(emails).invalid.map(({ index }) => index), [1]);
  const { adapter, requests } = provider(() => accept);
  const outcomes = await deliverEmails(adapter, emails);
  assert.deepEqual(outcomes.map((o) => o.outcome), ["accepted", "permanent", "accepted"]);
  assert.match((outcomes[1] as { reason: string }).reason, /"ana\.\.silva@x\.example" is not one SendGrid accepts \(.*two dots in a row\)/);
  assert.deepEqual(requests.map(recipientsOf), [["ana@x.example", "ben@x.example"]], "one request, without it");
});

Deno.test("a batch is one personalization per email: its recipient, subject, substitutions and notification, the body once", () => {
  const batch = batchOf([email("a@x.example"), email("b@x.example")]);
  assert.deepEqual(batch, {
    templateKey: "checkin_reminder",
    html: "<p>a: `h0`</p>",
    text: "a: `t0`",
    recipients: ["a@x.example", "b@x.example"].map((to) => ({
      notificationId: `n-${to}`, tenantId: "t-1", to, subject: `Welcome, ${to}`, substitutions: { "`h0`": to, "`t0`": to },
    })),
  });
});

Deno.test("a refused batch is split in halves until the refused email is alone: it fails, the rest are accepted", async () => {
  const emails = Array.from({ length: 8 }, (_, i) => email(i === 5 ? "refused@x.example" : `g${i}@x.example`));
  const { adapter, requests } = provider((request) =>
    recipientsOf(request).includes("refused@x.example")
      ? { outcome: "refused", reason: "SendGrid answered 400: personalizations.0.to.0.email: Does not contain a valid address." }
      : accept
  );
  const outcomes = await deliverEmails(adapter, emails);
  assert.deepEqual(outcomes.map((o) => o.outcome), ["accepted", "accepted", "accepted", "accepted", "accepted", "permanent", "accepted", "accepted"]);
  assert.match((outcomes[5] as { reason: string }).reason, /^SendGrid answered 400: personalizations/);
  // 8 refused; 0-3 taken, 4-7 refused; 4-5 refused, 6-7 taken; 4 taken, 5 refused.
  assert.deepEqual(requests.map((request) => recipientsOf(request).length), [8, 4, 4, 2, 2, 1, 1]);
  // Each email carries the message id of the request that took it.
  const ids = outcomes.map((o) => o.outcome === "accepted" ? o.providerMessageId : null);
  assert.equal(new Set(ids.slice(0, 4)).size, 1, "the first half went in one request");
  assert.notEqual(ids[4], ids[6]);
});

Deno.test("two refused emails in one batch are each found; the split sends no email twice", async () => {
  const emails = Array.from({ length: 6 }, (_, i) => email(`g${i}@x.example`));
  const refused = new Set(["g0@x.example", "g4@x.example"]);
  const { adapter, requests } = provider((request) =>
    recipientsOf(request).some((to) => refused.has(to)) ? { outcome: "refused", reason: "SendGrid answered 400: personalizations" } : accept
  );
  const outcomes = await deliverEmails(adapter, emails);
  assert.deepEqual(outcomes.map((o) => o.outcome), ["permanent", "accepted", "accepted", "accepted", "permanent", "accepted"]);
  const acceptedRequests = requests.filter((request) => !recipientsOf(request).some((to) => refused.has(to)));
  assert.deepEqual(acceptedRequests.flatMap(recipientsOf).sort(), ["g1@x.example", "g2@x.example", "g3@x.example", "g5@x.example"]);
});

Deno.test("a throttled or failing request leaves every email of it to be tried again, with the provider's Retry-After", async () => {
  const emails = [email("a@x.example"), email("b@x.example"), email("c@x.example")];
  const throttled: Delivery = { outcome: "transient", reason: "SendGrid answered 429: too many requests", retryAfterSeconds: 30 };
  const { adapter, requests } = provider(() => throttled);
  assert.deepEqual(await deliverEmails(adapter, emails), [throttled, throttled, throttled]);
  assert.equal(requests.length, 1, "not split: a retry later is the answer");
});

Deno.test("a refusal of what every email shares fails them all, in one request", async () => {
  const emails = [email("a@x.example"), email("b@x.example")];
  const refusal: Delivery = { outcome: "permanent", reason: "SendGrid answered 400: from: not a verified Sender Identity" };
  const { adapter, requests } = provider(() => refusal);
  assert.deepEqual(await deliverEmails(adapter, emails), [refusal, refusal]);
  assert.equal(requests.length, 1);
});

Deno.test("an adapter that throws leaves its emails to be tried again", async () => {
  const emails = [email("a@x.example"), email("b@x.example"), email("c@x.example", { alone: true })];
  const { adapter } = provider(() => {
    throw new Error("boom");
  });
  const outcomes = await deliverEmails(adapter, emails);
  assert.deepEqual(outcomes.map((o) => [o.outcome, "reason" in o ? o.reason : null]), Array(3).fill(["transient", "the adapter threw: Error: boom"]));
});
