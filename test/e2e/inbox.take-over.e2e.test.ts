// An agent takes a conversation over from the assistant in the inbox (real Chromium for both sides). The customer on
// the demo page is stuck in front of a confirmation card (what they type meanwhile waits for the card's answer); Ada
// finds them by search — a conversation with the assistant, where the inbox used to offer internal notes only, with no
// way to step in — presses Take over, and answers at once: the card is cancelled for the customer, who reads her reply.
// Screenshots: test-artifacts/inbox-take-over{,-widget}.png.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PASSWORD } from '../support/agents.ts';
import { axeViolations } from '../support/axe.ts';
import { ARTIFACTS, withScreenshotOnFailure } from '../support/browser.ts';
import { useDemoParley } from '../support/chromium-parley.ts';
import { namedAgent } from '../support/inbox.ts';
import { TEST_SECRET } from '../support/parley.ts';

const DEADLINE = 30_000;
const demo = useDemoParley();

describe('taking a conversation over from the assistant (Chromium)', () => {
  it('Take over hands the conversation to the agent, cancels the waiting card and lets her reply', async () => {
    await namedAgent(demo.parley, 'Ada');
    const customer = await demo.browser.newPage({ viewport: { width: 1280, height: 800 } });
    let conversationId: string | undefined;
    customer.on('websocket', (ws) =>
      ws.on('framereceived', (f) => {
        const ready = /"type":"ready".*?"conversationId":"([^"]+)"/.exec(String(f.payload));
        if (ready) conversationId = ready[1];
      }),
    );
    const agent = await demo.browser.newPage({ viewport: { width: 1280, height: 800 } });
    await withScreenshotOnFailure(customer, 'inbox-take-over-customer', async () => {
      await withScreenshotOnFailure(agent, 'inbox-take-over', async () => {
        await customer.goto(`${demo.parley.url()}/demo.html`);
        await customer.locator('[data-testid=launcher]').click();
        await expect.poll(() => customer.locator('[data-testid=status]').textContent(), { timeout: DEADLINE }).toBe('Online');
        const input = customer.locator('[data-testid=input]');
        await input.fill('Cancel order 1001');
        await input.press('Enter');
        await customer.locator('[data-testid=confirm]').waitFor({ timeout: DEADLINE });
        expect(conversationId).toBeDefined();
        const read = await fetch(`${demo.parley.url()}/conversations/${conversationId}`, { headers: { authorization: `Bearer ${TEST_SECRET}` } });
        const email = ((await read.json()) as { customer: { email: string } }).customer.email;

        await agent.goto(`${demo.parley.url()}/inbox`);
        await agent.locator('[data-testid=email-input]').fill('ada@example.com');
        await agent.locator('[data-testid=password-input]').fill(PASSWORD);
        await agent.locator('[data-testid=password-input]').press('Enter');
        await expect.poll(() => agent.locator('[data-testid=live-state]').textContent(), { timeout: DEADLINE }).toBe('Live');
        await agent.locator('[data-testid=search]').fill(email);
        await agent.locator(`[data-testid=conversation-item][data-id="${conversationId}"]`).click({ timeout: DEADLINE });
        await expect.poll(() => agent.locator('[data-testid=holder]').textContent(), { timeout: DEADLINE }).toBe('Web · With the assistant');
        expect(await agent.locator('.composer .hint').textContent()).toBe('With the assistant: Take over to reply');
        expect(await axeViolations(agent)).toEqual([]);

        await agent.locator('[data-testid=take-over]').click();
        await expect.poll(() => agent.locator('[data-testid=holder]').textContent(), { timeout: DEADLINE }).toBe('Web · With Ada');
        await expect.poll(() => agent.locator('[data-testid=toast]').textContent(), { timeout: DEADLINE }).toBe('Taken over: the assistant stops answering.');
        expect(await agent.locator('[data-testid=take-over]').count()).toBe(0);
        await expect
          .poll(() => agent.locator('[data-testid=transcript] [data-kind=handoff]').allTextContents(), { timeout: DEADLINE })
          .toEqual([expect.stringContaining('Ada took the conversation over in the inbox')]);
        expect(await agent.locator('[data-testid=note-mode]').isChecked()).toBe(false);
        await agent.locator('[data-testid=composer]').fill('Hi, Ada here: I can help with order 1001.');
        await agent.locator('[data-testid=composer]').press('Enter');

        // The customer: the card is cancelled (a person is taking over), and Ada's reply arrives under her name.
        await expect.poll(() => customer.locator('[data-testid=receipt]').textContent(), { timeout: DEADLINE }).toMatch(/person is taking over/i);
        const fromAda = customer.locator('[data-testid=message][data-role=agent]');
        await expect.poll(() => fromAda.textContent(), { timeout: DEADLINE }).toContain('Hi, Ada here: I can help with order 1001.');
        mkdirSync(ARTIFACTS, { recursive: true });
        await agent.screenshot({ path: join(ARTIFACTS, 'inbox-take-over.png') });
        await customer.screenshot({ path: join(ARTIFACTS, 'inbox-take-over-widget.png') });
      });
    });
    await agent.close();
    await customer.close();
  }, 120_000);
});
