// Opens the demo's page in Chromium (playwright-core, the system's
// browser), waits until it has accepted --packets packets (or --timeout
// ms pass), flushes its reports, screenshots the view, and prints one
// line "RESULT {json}" with the page's counts (window.bitwire) for
// browser_test.go to judge. With --arena, the page is the arena's: it
// waits until the page says it is done instead. Chromium's flags are the
// ones its closed network and root need; docs/clients.md says why each is
// there.
import { chromium } from "playwright-core";

function arg(name, def) {
  const i = process.argv.indexOf("--" + name);
  return i >= 0 ? process.argv[i + 1] : def;
}
const url = arg("url");
const shot = arg("screenshot");
const packets = Number(arg("packets", "100"));
const timeout = Number(arg("timeout", "20000"));
const exe = arg("chromium", "/usr/bin/chromium");
const arena = process.argv.includes("--arena");

const browser = await chromium.launch({
  executablePath: exe,
  headless: true,
  args: [
    "--no-sandbox", // root, in a container
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
  ],
});
let result = { error: "" };
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
  const logs = [];
  page.on("console", (m) => logs.push(m.type() + ": " + m.text()));
  page.on("pageerror", (e) => logs.push("pageerror: " + e.message));
  const t0 = Date.now();
  await page.goto(url);
  if (arena) {
    // The arena's page: until every message both ways has arrived and
    // enough was drawn (window.bitwire.done), then its last report.
    await page.waitForFunction(() => { const s = window.bitwire; return s && (s.error !== "" || s.done); }, null, { timeout, polling: 100 }).catch(() => {});
    const ms = Date.now() - t0;
    await page.evaluate(() => window.bitwireFlush && window.bitwireFlush());
    await page.waitForTimeout(100);
    await page.locator("#view").screenshot({ path: shot });
    result = await page.evaluate(() => window.bitwire);
    result.ms = ms;
    result.logs = logs.slice(0, 20);
  } else {
    const until = (n) => page.waitForFunction((n) => {
      const s = window.bitwire;
      return s && (s.error !== "" || (s.accepted >= n && s.server !== null));
    }, n, { timeout, polling: 100 }).catch(() => {});
    // The server's counts at two reports, a window without the handshake:
    // the transport's overhead over it.
    await until(Math.floor(packets / 3));
    const first = await page.evaluate(() => ({ at: Date.now(), server: window.bitwire.server, received: window.bitwire.received, bytes: window.bitwire.bytes }));
    await until(packets);
    const connectedMs = Date.now() - t0;
    await page.evaluate(() => window.bitwireFlush && window.bitwireFlush());
    const second = await page.evaluate(() => ({ at: Date.now(), server: window.bitwire.server, received: window.bitwire.received, bytes: window.bitwire.bytes }));
    await page.waitForTimeout(300); // two frames drawn after the last packet counted
    await page.locator("#view").screenshot({ path: shot });
    result = await page.evaluate(() => window.bitwire);
    result.ms = connectedMs;
    result.window = [first, second];
    result.logs = logs.slice(0, 20);
  }
} catch (e) {
  result.error = String(e);
} finally {
  await browser.close();
}
console.log("RESULT " + JSON.stringify(result));
