// Issue 36, part 1: `parley knowledge import <folder>` as a child process against a real server: Markdown, HTML
// (boilerplate left out), text and PDF files, nested folders; a second import updates the same articles.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startParley, TEST_SECRET, tempDir, type TestParley } from '../support/parley.ts';
import { tinyPdf } from '../support/tiny-pdf.ts';

const run = promisify(execFile);
const open: TestParley[] = [];
afterEach(async () => {
  for (const p of open.splice(0)) await p.close();
});

const cli = (args: string[], env: Record<string, string>) =>
  run(process.execPath, ['--import', 'tsx', 'src/main.ts', 'knowledge', ...args], { env: Object.assign({}, process.env, env), timeout: 120_000 });

async function search(p: TestParley, q: string, secret = TEST_SECRET) {
  const res = await fetch(`${p.url()}/api/v1/knowledge/search?q=${encodeURIComponent(q)}`, { headers: { authorization: `Bearer ${secret}` } });
  return ((await res.json()) as { items: { articleId: string; title: string; heading: string }[] }).items;
}

describe('parley knowledge import', () => {
  it('imports a folder of .md, .html, .txt and .pdf files through the API, and updates them on a second import', async () => {
    const p = await startParley();
    open.push(p);
    const dir = tempDir('parley-kb-');
    mkdirSync(join(dir, 'billing'));
    writeFileSync(join(dir, 'returns.md'), '# Returns policy\n\n## Time limit\n\nSend items back within thirty days.\n');
    writeFileSync(
      join(dir, 'billing', 'Invoices Guide.html'),
      '<html><head><title>Invoices</title></head><body><nav>Menu navonlyword</nav><h1>Invoices</h1><p>Download a VAT invoice from your orders page.</p><footer>footeronlyword</footer></body></html>',
    );
    writeFileSync(join(dir, 'hours.txt'), 'Store hours\nOpen Monday to Saturday from nine to eight.\n');
    writeFileSync(join(dir, 'warranty.pdf'), tinyPdf('Warranty claims need the original receipt'));
    writeFileSync(join(dir, 'ignored.json'), '{}');

    const first = await cli(['import', dir, '--url', p.url()], { SERVICE_SDK_SECRET: TEST_SECRET });
    expect(first.stderr).toContain('done: 4 files, 4 created, 0 updated');
    expect((await search(p, 'thirty days'))[0]).toMatchObject({ articleId: 'returns', title: 'Returns policy', heading: 'Returns policy › Time limit' });
    expect((await search(p, 'VAT invoice'))[0]).toMatchObject({ articleId: 'billing:invoices-guide', title: 'Invoices' });
    expect(await search(p, 'navonlyword footeronlyword')).toEqual([]);
    expect((await search(p, 'open saturday'))[0]).toMatchObject({ articleId: 'hours', title: 'Store hours' });
    expect((await search(p, 'warranty receipt'))[0]).toMatchObject({ articleId: 'warranty' });

    writeFileSync(join(dir, 'returns.md'), '# Returns policy\n\nSend items back within sixty days.\n');
    const second = await cli(['import', dir], { SERVICE_SDK_SECRET: TEST_SECRET, PARLEY_URL: p.url() });
    expect(second.stderr).toContain('done: 4 files, 0 created, 4 updated');
    expect((await search(p, 'sixty'))[0].articleId).toBe('returns');
    expect(await search(p, 'thirty')).toEqual([]);

    await expect(cli(['import', dir, '--url', p.url()], { SERVICE_SDK_SECRET: 'wrong-secret-0123456789' })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('parley knowledge: billing:invoices-guide: Missing or invalid service secret'),
    });
  }, 240_000); // three child processes, each starting tsx, on a loaded machine

  it("with neither an address nor a secret: the profile's Parley and the secret it generated (as after npm start); never sent elsewhere", async () => {
    // Parley with no secret configured: it generates one and keeps it in its storage.path, as `npm start` does.
    const p = await startParley({ config: { secret: '' } });
    open.push(p);
    const profile = join(tempDir('parley-profile-'), 'profile.yaml');
    writeFileSync(profile, `server:\n  host: 127.0.0.1\n  port: ${new URL(p.url()).port}\nstorage:\n  path: ${p.storagePath}\n`);
    const dir = tempDir('parley-kb-');
    writeFileSync(join(dir, 'returns.md'), '# Returns policy\n\nSend items back within thirty days.\n');
    // Nothing in the environment says where Parley is or what its secret is, but the profile.
    const env = { SERVICE_CONFIG: profile, SERVICE_SDK_SECRET: '', PARLEY_URL: '' };
    const done = await cli(['import', dir], env);
    expect(done.stderr).toContain('done: 1 files, 1 created, 0 updated');
    expect(p.services.secret).not.toBe(TEST_SECRET);
    expect((await search(p, 'thirty days', p.services.secret))[0]).toMatchObject({ articleId: 'returns' });
    // A folder that is not there: one line naming it, no stack trace.
    await expect(cli(['import', join(dir, 'no-such-folder')], env)).rejects.toMatchObject({
      code: 1,
      stderr: `parley knowledge: ${join(dir, 'no-such-folder')}: no such folder (give the folder of your help articles)\n`,
    });
    // Another address (the same server by another name): the profile's secret is not offered to it.
    await expect(cli(['import', dir, '--url', p.url().replace('127.0.0.1', 'localhost')], env)).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('parley knowledge: the service secret is needed: --secret or SERVICE_SDK_SECRET'),
    });
  }, 240_000);
});
