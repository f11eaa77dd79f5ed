// Headless Chromium (Debian's package; npm test installs it) driven by puppeteer-core,
// kept to loopback: nothing but 127.0.0.1 and localhost resolves, and no proxy is used.
// Every request a page makes is recorded, so a test can say none left the machine.
import puppeteer, { type Browser, type Page } from "puppeteer-core";

const loopbackHosts = new Set(["127.0.0.1", "localhost", "[::1]"]);

export function isLoopback(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  if (protocol === "data:" || protocol === "blob:" || protocol === "about:") return true;
  return (protocol === "http:" || protocol === "https:" || protocol === "ws:") && loopbackHosts.has(hostname);
}

export type RecordedPage = { page: Page; requests: string[] };

// `profile`: the --user-data-dir every process of this browser carries (see withChromium).
export async function launchChromium(profile?: string): Promise<Browser> {
  try {
    return await puppeteer.launch({
      executablePath: "/usr/bin/chromium",
      headless: true,
      ...(profile === undefined ? {} : { userDataDir: profile }),
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--no-proxy-server",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
      ],
    });
  } catch (error) {
    throw new Error(`headless Chromium did not start (npm test installs Debian's chromium as root): ${error}`);
  }
}

// A page of its own (1366 x 900) whose every request URL is kept in `requests`.
export async function recordedPage(browser: Browser): Promise<RecordedPage> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1366, height: 900 });
  const requests: string[] = [];
  page.on("request", (request) => void requests.push(request.url()));
  return { page, requests };
}

// The processes of one browser all carry its --user-data-dir on their command line; any
// still there are found by it, and only they, and killed by pid.
async function killAll(profile: string): Promise<void> {
  const { stdout } = await new Deno.Command("ps", { args: ["-eo", "pid=,args="], stdin: "null", stderr: "null" }).output();
  for (const line of new TextDecoder().decode(stdout).split("\n")) {
    const match = line.match(/^\s*(\d+) (.*)$/);
    if (!match || !match[2]!.includes(`--user-data-dir=${profile}`)) continue;
    try {
      Deno.kill(Number(match[1]), "SIGKILL");
    } catch {
      // already gone
    }
  }
}

// Runs `work` with a fresh browser on a profile of its own, closed however it ends; a
// renderer or helper that outlives the close is killed, and the profile removed.
export async function withChromium<T>(work: (browser: Browser) => Promise<T>): Promise<T> {
  const profile = await Deno.makeTempDir({ prefix: "pms-chromium-" });
  try {
    const browser = await launchChromium(profile);
    try {
      return await work(browser);
    } finally {
      await browser.close().catch(() => {}); // what is left is killed below
    }
  } finally {
    await killAll(profile);
    await Deno.remove(profile, { recursive: true });
  }
}
