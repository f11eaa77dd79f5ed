// What the loopback doubles of remote providers (SendGrid, the SMS provider) share:
// the attempts they recorded, the scripted answers tests queue up, the fates of the
// messages they accept and the reports they post about them afterwards (signed, retried
// as the provider retries), and the /_capture/* routes that read and reset all of it.
export type ScriptedResponse = {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  delayMs?: number;
};

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

export function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => AbortSignal.timeout(milliseconds).addEventListener("abort", () => resolve()));
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// The answers of a POST /_capture/script body, or null when they are not [{status, ...}].
function scriptedResponses(responses: unknown): ScriptedResponse[] | null {
  return Array.isArray(responses) && responses.every((response) => isRecord(response) && Number.isInteger(response.status))
    ? responses as ScriptedResponse[]
    : null;
}

// Scripted answers for the next requests to one target of a double (a push subscription's
// token, a webhook endpoint's name) or to any: a target's own queue first, then the shared one.
export type TargetedScripts = {
  // The next answer for a request to `target`, taken off its queue; undefined when none is
  // queued. The caller waits out its delayMs.
  take(target: string): ScriptedResponse | undefined;
  // POST /_capture/script with {<key>?, responses: [{status, headers?, body?, delayMs?}]}.
  set(request: Request): Promise<Response>;
  clear(): void;
};

// `key`: the body's field that names the target (token, name).
export function createTargetedScripts(key: string): TargetedScripts {
  let byTarget = new Map<string, ScriptedResponse[]>();
  let any: ScriptedResponse[] = [];
  return {
    take(target) {
      const queued = byTarget.get(target);
      return queued?.length ? queued.shift() : any.shift();
    },
    async set(request) {
      const body: unknown = await request.json().catch(() => null);
      const responses = isRecord(body) ? scriptedResponses(body.responses) : null;
      const target = isRecord(body) ? body[key] : undefined;
      if (!responses || (target !== undefined && typeof target !== "string")) {
        return json(400, { message: `expected {${key}?, responses: [{status, headers?, body?, delayMs?}]}` });
      }
      const queue = typeof target === "string" ? byTarget.get(target) ?? [] : any;
      queue.push(...responses);
      if (typeof target === "string") byTarget.set(target, queue);
      return json(200, { pending: queue.length });
    },
    clear() {
      byTarget = new Map();
      any = [];
    },
  };
}

// How the reports about one accepted message are posted: as they happened, each event
// in a post of its own, or the last first; every post twice (a provider that lost the
// first answer, or that retries); the first after `delayMs` (the provider's batching),
// each next one `gapMs` after the one before is done.
export type Delivery = {
  post?: "together" | "separately" | "reversed";
  duplicate?: boolean;
  delayMs?: number;
  gapMs?: number;
};

// What becomes of one accepted message: the provider's events about it (each provider
// says what an event is: SendGrid's event objects, the SMS provider's statuses) and how
// they are posted.
export type Fate = Delivery & { events: Record<string, unknown>[] };

// One report post and what became of it: every attempt's answer (or "unreachable"), and
// whether the provider is done with it (answered 2xx, or out of attempts).
export type ReportPost = {
  at: string;
  url: string;
  payload: unknown;
  attempts: { at: string; status: number | "unreachable" }[];
  done: boolean;
};

export type Capture<Attempt extends { status: number }> = {
  record(attempt: Attempt): void;
  // The next scripted answer, after its delay; undefined when none is queued.
  nextScripted(): Promise<ScriptedResponse | undefined>;
  // The fate of the next accepted message: the next queued one, else the default set with
  // POST /_capture/fates, or undefined for the double's own.
  nextFate(): Fate | undefined;
  // Runs the reporting about one accepted message in the background, counted among the
  // pending work (GET /_capture/pending-reports) until it ends. `live` turns false when
  // DELETE /_capture forgets everything: the work posts nothing more then.
  track(work: (live: () => boolean) => Promise<void>): void;
  // Posts one report to `url`: `send` makes each attempt's request (signed anew each time,
  // as a provider signs when it sends), `retry` says whether an answer is worth another
  // attempt, up to `maxAttempts` with doubling pauses from `firstPauseMs`.
  report(
    live: () => boolean,
    url: string,
    payload: unknown,
    send: () => Promise<RequestInit>,
    policy: { retry: (status: number | "unreachable") => boolean; maxAttempts: number; firstPauseMs: number },
  ): Promise<void>;
  // The /_capture/* routes; null for any other request.
  control(request: Request): Response | Promise<Response> | null;
};

// `accepted`: the status of an attempt the provider took (listed by /_capture/messages).
// `messagesOf`: the messages one accepted attempt carried, where a request can carry
// several (SendGrid's personalizations); by default the attempt is the one message.
export function createCapture<Attempt extends { status: number }>(
  accepted: number,
  messagesOf: (attempt: Attempt) => unknown[] = (attempt) => [attempt],
): Capture<Attempt> {
  let attempts: Attempt[] = [];
  let script: ScriptedResponse[] = [];
  let fates: Fate[] = [];
  let reports: ReportPost[] = [];
  // Bumped by DELETE /_capture: reporting still under way from before stops posting.
  let generation = 0;
  // Accepted messages whose reports are not all posted yet, in this generation.
  let pendingReports = 0;

  // The fate of a message no queued fate is left for; undefined: the double's own default.
  let fallback: Fate | undefined;

  const isFate = (fate: unknown): fate is Fate =>
    isRecord(fate) && Array.isArray(fate.events) && fate.events.every(isRecord) &&
    (fate.post === undefined || ["together", "separately", "reversed"].includes(fate.post as string)) &&
    (fate.duplicate === undefined || typeof fate.duplicate === "boolean") &&
    (fate.delayMs === undefined || Number.isInteger(fate.delayMs)) && (fate.gapMs === undefined || Number.isInteger(fate.gapMs));

  // {fates: [...]} queues fates for the next messages; {default: fate} makes one the fate of
  // every message after them ({default: null} restores the double's own, as DELETE /_capture does).
  async function setFates(request: Request): Promise<Response> {
    const body: unknown = await request.json().catch(() => null);
    const valid = isRecord(body) && (body.fates !== undefined || body.default !== undefined) &&
      (body.fates === undefined || (Array.isArray(body.fates) && body.fates.every(isFate))) &&
      (body.default === undefined || body.default === null || isFate(body.default));
    if (!valid) {
      return json(400, {
        message: "expected {fates?: [fate], default?: fate | null}, a fate being " +
          "{events: [{...}], post?: together|separately|reversed, duplicate?, delayMs?, gapMs?}",
      });
    }
    if (Array.isArray(body.fates)) fates.push(...body.fates as Fate[]);
    if (body.default !== undefined) fallback = body.default === null ? undefined : body.default as Fate;
    return json(200, { pending: fates.length });
  }

  async function setScript(request: Request): Promise<Response> {
    const body: unknown = await request.json().catch(() => null);
    const responses = isRecord(body) ? scriptedResponses(body.responses) : null;
    if (!responses) return json(400, { message: "expected {responses: [{status, headers?, body?, delayMs?}]}" });
    script.push(...responses);
    return json(200, { pending: script.length });
  }

  return {
    record: (attempt) => void attempts.push(attempt),
    async nextScripted() {
      const scripted = script.shift();
      if (scripted?.delayMs) await sleep(scripted.delayMs);
      return scripted;
    },
    nextFate: () => fates.shift() ?? fallback,
    track(work) {
      const ours = generation;
      const live = () => ours === generation;
      pendingReports++;
      void work(live).catch((error) => console.error(`reporting failed: ${String(error)}`)).finally(() => {
        if (live()) pendingReports--;
      });
    },
    async report(live, url, payload, send, policy) {
      if (!live()) return;
      const post: ReportPost = { at: new Date().toISOString(), url, payload, attempts: [], done: false };
      reports.push(post);
      let pause = policy.firstPauseMs;
      for (let attempt = 1; ; attempt++) {
        if (!live()) return;
        let status: number | "unreachable";
        try {
          const response = await fetch(url, { ...await send(), signal: AbortSignal.timeout(10_000) });
          await response.body?.cancel();
          status = response.status;
        } catch {
          status = "unreachable";
        }
        if (!live()) return;
        post.attempts.push({ at: new Date().toISOString(), status });
        if ((typeof status === "number" && status >= 200 && status < 300) || !policy.retry(status) || attempt >= policy.maxAttempts) {
          post.done = true;
          return;
        }
        await sleep(pause);
        pause *= 2;
      }
    },
    control(request) {
      switch (`${request.method} ${new URL(request.url).pathname}`) {
        case "GET /_capture/messages":
          return json(200, attempts.filter((a) => a.status === accepted).flatMap(messagesOf));
        case "GET /_capture/requests":
          return json(200, attempts);
        case "POST /_capture/script":
          return setScript(request);
        case "POST /_capture/fates":
          return setFates(request);
        case "GET /_capture/reports":
          return json(200, reports);
        case "GET /_capture/pending-reports":
          return json(200, { pending: pendingReports });
        case "DELETE /_capture":
          attempts = [];
          script = [];
          fates = [];
          fallback = undefined;
          reports = [];
          pendingReports = 0;
          generation++;
          return new Response(null, { status: 204 });
        default:
          return null;
      }
    },
  };
}

// Serves `handler` and logs one line per provider call to standard output, which the stack
// keeps as the double's log: the method, the path and the answer's status, never a header
// or the body, where the API key and the message travel.
export function loggingCalls(handler: (request: Request) => Response | Promise<Response>) {
  return async (request: Request): Promise<Response> => {
    const response = await handler(request);
    const { pathname } = new URL(request.url);
    if (!pathname.startsWith("/_capture")) {
      console.log(JSON.stringify({ at: new Date().toISOString(), method: request.method, path: pathname, status: response.status }));
    }
    return response;
  };
}

// The posts a fate's events go out in, in the order they are sent.
// No events, no post.
export function postsOf<T>(events: T[], delivery: Delivery, defaultPost: "together" | "separately"): T[][] {
  if (events.length === 0) return [];
  const post = delivery.post ?? defaultPost;
  const groups = post === "together" ? [events] : events.map((event) => [event]);
  if (post === "reversed") groups.reverse();
  return delivery.duplicate ? groups.flatMap((group) => [group, group]) : groups;
}
