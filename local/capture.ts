// What the loopback doubles of remote providers (SendGrid, the SMS provider) share:
// the attempts they recorded, the scripted answers tests queue up, and the
// /_capture/* routes that read and reset both.
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

export type Capture<Attempt extends { status: number }> = {
  record(attempt: Attempt): void;
  // The next scripted answer, after its delay; undefined when none is queued.
  nextScripted(): Promise<ScriptedResponse | undefined>;
  // The /_capture/* routes; null for any other request.
  control(request: Request): Response | Promise<Response> | null;
};

// `accepted`: the status of an attempt the provider took (listed by /_capture/messages).
export function createCapture<Attempt extends { status: number }>(accepted: number): Capture<Attempt> {
  let attempts: Attempt[] = [];
  let script: ScriptedResponse[] = [];

  async function setScript(request: Request): Promise<Response> {
    const body: unknown = await request.json().catch(() => null);
    if (!isRecord(body) || !Array.isArray(body.responses) ||
        !body.responses.every((r) => isRecord(r) && Number.isInteger(r.status))) {
      return json(400, { message: "expected {responses: [{status, headers?, body?, delayMs?}]}" });
    }
    script.push(...(body.responses as ScriptedResponse[]));
    return json(200, { pending: script.length });
  }

  return {
    record: (attempt) => void attempts.push(attempt),
    async nextScripted() {
      const scripted = script.shift();
      if (scripted?.delayMs) await sleep(scripted.delayMs);
      return scripted;
    },
    control(request) {
      switch (`${request.method} ${new URL(request.url).pathname}`) {
        case "GET /_capture/messages":
          return json(200, attempts.filter((a) => a.status === accepted));
        case "GET /_capture/requests":
          return json(200, attempts);
        case "POST /_capture/script":
          return setScript(request);
        case "DELETE /_capture":
          attempts = [];
          script = [];
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
