// Issue 33 part 4: replies written in Markdown reach WhatsApp in WhatsApp's own formatting.
import { describe, expect, it } from 'vitest';
import { toWhatsAppText } from '../../src/whatsapp/format.ts';

describe('Markdown to WhatsApp formatting', () => {
  it('bold, italic, strike, headings, lists', () => {
    expect(toWhatsAppText('Your **order 1001** has *shipped*.')).toBe('Your *order 1001* has _shipped_.');
    expect(toWhatsAppText('__bold__ and _italic_ and ~~gone~~')).toBe('*bold* and _italic_ and ~gone~');
    expect(toWhatsAppText('## Your orders\n* 1001: shipped\n+ 1002: packed\n- 1003: delivered')).toBe(
      '*Your orders*\n- 1001: shipped\n- 1002: packed\n- 1003: delivered',
    );
    expect(toWhatsAppText('**Note:** *see below*')).toBe('*Note:* _see below_');
  });

  it('links become text and a plain URL; bare URLs and code stay as they are', () => {
    expect(toWhatsAppText('Track it [here](https://ups.com/t?n=1Z_9).')).toBe('Track it here (https://ups.com/t?n=1Z_9).');
    expect(toWhatsAppText('[https://a.example/x](https://a.example/x)')).toBe('https://a.example/x');
    expect(toWhatsAppText('[help@example.com](mailto:help@example.com)')).toBe('mailto:help@example.com');
    expect(toWhatsAppText('see https://a.example/some_path_here and *this*')).toBe('see https://a.example/some_path_here and _this_');
    expect(toWhatsAppText('run `a **b** c` then\n```\nx = **y**\n```')).toBe('run `a **b** c` then\n```\nx = **y**\n```');
    expect(toWhatsAppText('2 * 3 = 6, and 4*5')).toBe('2 * 3 = 6, and 4*5');
    expect(toWhatsAppText('plain text')).toBe('plain text');
  });
});
