// A claim's emails in as few SendGrid requests as SendGrid allows. Emails that can share
// a body (the same template rendered to the same shape: personalize.ts) go together, up to
// SendGrid's 1,000 personalizations a request, each address at most once a request (SendGrid
// refuses a request that names one twice). The rest go one request each, as before.
//
// One request has one answer for all of its emails: accepted, throttled or failing (429,
// 5xx, no answer: every email of it is tried again later), or refused. A refusal of the
// shared part of the message (the sender, the content) is every email's. A refusal that
// may lie with one recipient (a 400 naming a personalization or nothing in particular) is
// split: each half is sent again, and halved again while refused, down to the one email
// SendGrid refuses, which fails alone while the others go. Addresses SendGrid would refuse
// for their syntax are failed before any request, so a split is for what slips past that.
import type { BatchDelivery, Delivery, EmailAdapter, OutgoingBatch, OutgoingMessage } from "./delivery.ts";
import { addressProblem, invalidAddressReason } from "./email-address.ts";
import type { PersonalizedEmail } from "./personalize.ts";

/** SendGrid's limit of personalizations (and of recipients) in one request. */
export const MAX_PERSONALIZATIONS = 1000;

/** An email as it is sent on its own, and the same with a body it can share, when it can. */
export type PreparedEmail = { message: OutgoingMessage; personalized: PersonalizedEmail | null };

/** Which requests the emails go in, by their index in the list planned. */
export type EmailPlan = {
  // Addresses SendGrid would refuse: no request, and why.
  invalid: { index: number; reason: string }[];
  // One request each, as an email on its own.
  alone: number[];
  // One request each, with a personalization per email (two or more).
  batches: number[][];
};

export function planEmails(emails: readonly PreparedEmail[], maxPerRequest = MAX_PERSONALIZATIONS): EmailPlan {
  const plan: EmailPlan = { invalid: [], alone: [], batches: [] };
  // The emails that can share a body, by template and body: one group per shape.
  const groups = new Map<string, number[]>();
  emails.forEach(({ message, personalized }, index) => {
    const problem = addressProblem(message.to);
    if (problem !== null) {
      plan.invalid.push({ index, reason: invalidAddressReason(message.to, problem) });
    } else if (personalized === null) {
      plan.alone.push(index);
    } else {
      const shape = `${message.templateKey}\u0000${personalized.html}\u0000${personalized.text}`;
      const group = groups.get(shape);
      if (group) group.push(index);
      else groups.set(shape, [index]);
    }
  });
  for (const group of groups.values()) {
    // Each request takes an address once: a second email to it waits for the next request.
    const requests: { indexes: number[]; addresses: Set<string> }[] = [];
    for (const index of group) {
      // SendGrid compares addresses as mail systems do, whatever their letters' case.
      const address = emails[index]!.message.to.toLowerCase();
      let request = requests.find((r) => r.indexes.length < maxPerRequest && !r.addresses.has(address));
      if (!request) {
        request = { indexes: [], addresses: new Set() };
        requests.push(request);
      }
      request.indexes.push(index);
      request.addresses.add(address);
    }
    for (const { indexes } of requests) {
      if (indexes.length === 1) plan.alone.push(indexes[0]!);
      else plan.batches.push(indexes);
    }
  }
  return plan;
}

/** The batch of these emails, whose bodies are one. */
export function batchOf(emails: readonly PreparedEmail[]): OutgoingBatch {
  const first = emails[0];
  if (!first?.personalized) throw new Error("a batch takes one or more emails with a shared body");
  return {
    templateKey: first.message.templateKey,
    html: first.personalized.html,
    text: first.personalized.text,
    recipients: emails.map(({ message, personalized }) => {
      if (!personalized) throw new Error(`notification ${message.notificationId} has no shared body`);
      return {
        notificationId: message.notificationId,
        tenantId: message.tenantId,
        to: message.to,
        subject: message.subject,
        substitutions: personalized.substitutions,
      };
    }),
  };
}

/** What became of each email, in the order given: one request per email alone and per batch. */
export async function deliverEmails(adapter: EmailAdapter, emails: readonly PreparedEmail[]): Promise<Delivery[]> {
  const plan = planEmails(emails);
  const deliveries: Delivery[] = new Array(emails.length);
  for (const { index, reason } of plan.invalid) deliveries[index] = { outcome: "permanent", reason };
  await Promise.all([
    ...plan.alone.map(async (index) => {
      deliveries[index] = await sendAlone(adapter, emails[index]!.message);
    }),
    ...plan.batches.map(async (indexes) => {
      const outcomes = await sendSplitting(adapter, indexes.map((index) => emails[index]!));
      indexes.forEach((index, position) => deliveries[index] = outcomes[position]!);
    }),
  ]);
  return deliveries;
}

async function sendAlone(adapter: EmailAdapter, message: OutgoingMessage): Promise<Delivery> {
  try {
    return await adapter.send(message);
  } catch (error) {
    return { outcome: "transient", reason: `the adapter threw: ${String(error)}`, retryAfterSeconds: null };
  }
}

/**
 * One request for the emails; while SendGrid refuses a request that may be refused for
 * one of them, each half in a request of its own. What became of each, in order.
 */
export async function sendSplitting(adapter: EmailAdapter, emails: readonly PreparedEmail[]): Promise<Delivery[]> {
  let answer: BatchDelivery;
  try {
    answer = await adapter.sendBatch(batchOf(emails));
  } catch (error) {
    answer = { outcome: "transient", reason: `the adapter threw: ${String(error)}`, retryAfterSeconds: null };
  }
  if (answer.outcome !== "refused") {
    const delivery: Delivery = answer;
    return emails.map(() => delivery);
  }
  if (emails.length === 1) return [{ outcome: "permanent", reason: answer.reason }];
  const middle = Math.ceil(emails.length / 2);
  const halves = await Promise.all([sendSplitting(adapter, emails.slice(0, middle)), sendSplitting(adapter, emails.slice(middle))]);
  return halves.flat();
}
