// The page benchmark's watchers (`bench.mjs`, `trace-load.mjs`): init scripts (`page.addInitScript`,
// run from the document's start) that find the first animation frame in which the 400 entries are
// shown and report it with a `console.log` line (`__bench {...}`): no script of Playwright's is
// evaluated in the page while it loads (see README.md). Each runs in the page: self-contained.
// Also, on the bench's side: `reported` (a watcher's report) and `openPageBrowser` (their Chromium).
import { openBrowser } from '../scene/profile.mjs';

/** The page benches' Chromium (its switches, a 1280x800 viewport) in `profile` (`otr` or `persistent`, ../scene/profile.mjs). */
export function openPageBrowser(chromium, profile) {
  return openBrowser(chromium, {
    profile,
    launch: {
      executablePath: process.env.ORBIT_CHROMIUM ?? '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
    },
    context: { viewport: { width: 1280, height: 800 } },
  });
}

/** Orbit's page: shown when `orbitInspect` holds and renders the 400 entries; with `untilConnected`, the report waits for the socket too. */
export function watchPage({ untilConnected }) {
  const watch = () => {
    // The frame's time is when its callback starts: what the bench's own checks cost (the page's
    // `orbitInspect.state()` copies its state, 1-3 ms cold) is not the page's load (until
    // 2026-12-05, branch `ld2`, the time was read after them).
    const now = performance.now();
    const inspect = window.orbitInspect;
    if (inspect && inspect.rendered() > 0) {
      const st = inspect.state();
      if (st.ready && st.shown && st.transcripts[st.shown]?.length === 400) {
        if (window.__benchShown === undefined) {
          window.__benchShown = now;
          performance.mark('bench:shown');
        }
        if (!untilConnected || st.connection === 'open') {
          console.log(`__bench ${JSON.stringify({ shown: window.__benchShown, connected: performance.now() })}`);
          return;
        }
      }
    }
    requestAnimationFrame(watch);
  };
  requestAnimationFrame(watch);
}

/** The static file: shown when its 400 articles are in the DOM; reported once loaded (`loadEventEnd` is set after the load event's handlers). */
export function watchStatic() {
  const report = () => {
    const loadEnd = performance.getEntriesByType('navigation')[0]?.loadEventEnd ?? 0;
    if (loadEnd > 0) console.log(`__bench ${JSON.stringify({ shown: window.__benchShown, loadEnd })}`);
    else setTimeout(report, 5);
  };
  const watch = () => {
    const now = performance.now();
    if (document.querySelectorAll('[role="log"] article').length === 400) {
      window.__benchShown = now;
      performance.mark('bench:shown');
      report();
      return;
    }
    requestAnimationFrame(watch);
  };
  requestAnimationFrame(watch);
}

/** Resolves with the watcher's report (rejects after 60 s). */
export function reported(page) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`no report from ${page.url()} within 60 s`)); }, 60000);
    page.on('console', (message) => {
      const text = message.text();
      if (!text.startsWith('__bench ')) return;
      clearTimeout(timer);
      resolve(JSON.parse(text.slice('__bench '.length)));
    });
  });
}
