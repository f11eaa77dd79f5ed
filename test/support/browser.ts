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

export async function launchChromium(): Promise<Browser> {
  try {
    return await puppeteer.launch({
      executablePath: "/usr/bin/chromium",
      headless: true,
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

// Runs `work` with a fresh browser, closed however it ends.
export async function withChromium<T>(work: (browser: Browser) => Promise<T>): Promise<T> {
  const browser = await launchChromium();
  try {
    return await work(browser);
  } finally {
    await browser.close();
  }
}
