// A Playwright browser server on this machine's Chromium, for the suite's --browser-ws (browsers on other machines).
// `playwright run-server` launches only Playwright's own browser builds and ignores a client's executable path, so
// this uses playwright-core's launchServer, which takes one. Prints the wsEndpoint as its first line, then serves until
// SIGTERM or SIGINT.
//
//   node tools/browser_server.mjs [--host 127.0.0.1] [--port 0] [--executable /usr/lib/chromium/chromium-headless-shell]
//
// playwright-core comes from .tools/browser-server (make browser-server), or from MEMTEST_PLAYWRIGHT_CORE (a folder).
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";

// The browser the suite itself would run: Debian's headless shell where installed, else its full Chromium.
const debianShell = "/usr/lib/chromium/chromium-headless-shell";
const debian = existsSync(debianShell) ? debianShell : "/usr/lib/chromium/chromium";

const { values } = parseArgs({
  options: {
    host: { type: "string", default: "127.0.0.1" },
    port: { type: "string", default: "0" },
    executable: { type: "string", default: process.env.MEMTEST_BROWSER_PATH || debian },
  },
});
const from = process.env.MEMTEST_PLAYWRIGHT_CORE || new URL("../.tools/browser-server/", import.meta.url).pathname;
let chromium;
try {
  ({ chromium } = createRequire(from.endsWith("/") ? from : `${from}/`)("playwright-core"));
} catch {
  console.error(`browser server: no playwright-core under ${from}: run make browser-server`);
  process.exit(2);
}
// The same quiet, offline flags as the suite's own launches (harness/browser/chromium.py QUIET_FLAGS).
const server = await chromium.launchServer({
  executablePath: values.executable,
  headless: true,
  host: values.host,
  port: Number(values.port),
  args: ["--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-quic", "--disable-dev-shm-usage"],
});
console.log(server.wsEndpoint());
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, async () => {
    await server.close();
    process.exit(0);
  });
}
