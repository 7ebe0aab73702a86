// Renders review comments (Markdown) as GitHub shows a pull-request comment — GitHub-flavoured
// Markdown with GitHub's alerts, in GitHub's own CSS (github-markdown-css) — and screenshots each
// with the system's headless Chromium. Nothing is fetched: the page is a local file, its CSS is
// inlined, and every request that is not for the page itself is refused.
//
// Usage: node shoot.mjs OUTDIR NAME=FILE.md[:open] ...   (":open" expands every <details>)
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { Marked } from 'marked';
import markedAlert from 'marked-alert';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const css = readFileSync(require.resolve('github-markdown-css/github-markdown-light.css'), 'utf8');
const [outDir, ...cases] = process.argv.slice(2);
if (!outDir || cases.length === 0) {
  console.error('usage: node shoot.mjs OUTDIR NAME=FILE.md[:open] ...');
  process.exit(2);
}

const marked = new Marked({ gfm: true }).use(markedAlert());

// A pull-request comment's frame: the author line above the rendered body, at GitHub's width.
function page(title, body) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<style>${css}
body { margin: 0; padding: 16px; background: #fff; font-family: -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
.comment { width: 880px; border: 1px solid #d1d9e0; border-radius: 6px; }
.comment-header { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; border-radius: 6px 6px 0 0;
  padding: 8px 16px; font-size: 14px; color: #59636e; }
.comment-header b { color: #1f2328; }
.markdown-body { padding: 16px; font-size: 14px; }
</style></head><body><div class="comment" id="comment">
<div class="comment-header"><b>github-actions</b> <span>bot</span> commented</div>
<article class="markdown-body">${body}</article></div></body></html>`;
}

const profile = mkdtempSync(join(tmpdir(), 'cdkbot-shots-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  viewport: { width: 920, height: 600 },
  deviceScaleFactor: 1,
});
try {
  for (const c of cases) {
    const [name, spec] = c.split('=');
    const [file, mode] = spec.split(':');
    const html = join(profile, `${name}.html`);
    writeFileSync(html, page(name, marked.parse(readFileSync(file, 'utf8'))));
    const p = await context.newPage();
    const url = 'file://' + html;
    await p.route('**/*', (route) => (route.request().url() === url ? route.continue() : route.abort()));
    await p.goto(url);
    if (mode === 'open') {
      await p.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));
    }
    const out = resolve(outDir, `${name}.png`);
    await p.locator('#comment').screenshot({ path: out });
    await p.close();
    console.log(out);
  }
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
