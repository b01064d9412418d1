// Issue 33, part 5: the pure parts of confirmations in the customer's language — picking a locale's text, filling a
// summary template, the fallbacks, the derived receipt, Parley's own words per language, and the SDK's receipt helpers.
import { describe, expect, it } from 'vitest';
import { conversationLocale, derivedReceipt, pickForLocale, questionFor, wordsFor } from '../../src/customers/locale.ts';
import { fillSummary, localizedSummary } from '../../src/conversations/localized-summary.ts';
import { errorReceipt, pickLocalized, splitResult, withReceipt } from '../../sdk/src/localized.ts';

const templates = { en: 'Cancel order {orderId}', es: 'Cancelar el pedido {orderId}', 'pt-BR': 'Cancelar o pedido {orderId}' };

describe('the locale of a conversation and its texts', () => {
  it("the customer's own locale; on WhatsApp the configured default when they never said; none on the web", () => {
    expect(conversationLocale({ locale: 'es-MX' }, 'web', 'en')).toBe('es-MX');
    expect(conversationLocale({ locale: 'fr' }, 'whatsapp', 'es')).toBe('fr');
    expect(conversationLocale({}, 'whatsapp', 'es')).toBe('es');
    expect(conversationLocale(undefined, 'web', 'es')).toBeUndefined();
  });

  it('picks the exact tag, then the language, then a regional variant of it, then English', () => {
    expect(pickForLocale(templates, 'pt-BR')).toBe(templates['pt-BR']);
    expect(pickForLocale(templates, 'es-MX')).toBe(templates.es);
    expect(pickForLocale(templates, 'ES')).toBe(templates.es);
    expect(pickForLocale(templates, 'pt-PT')).toBe(templates['pt-BR']);
    expect(pickForLocale(templates, 'de')).toBe(templates.en);
    expect(pickForLocale(templates, undefined)).toBe(templates.en);
    expect(pickForLocale({ es: 'x' }, 'de')).toBeUndefined();
    expect(pickForLocale(undefined, 'es')).toBeUndefined();
  });

  it("Parley's own words: the question's punctuation and the WhatsApp buttons per language", () => {
    expect(questionFor('es-MX', 'Cancelar el pedido 1001')).toBe('¿Cancelar el pedido 1001?');
    expect(questionFor('fr', 'Annuler la commande 1001')).toBe('Annuler la commande 1001 ?');
    expect(questionFor(undefined, 'Cancel order 1001')).toBe('Cancel order 1001?');
    expect([wordsFor('es').yes, wordsFor('de').no, wordsFor('fr').yes, wordsFor('pt').yes]).toEqual(['Sí', 'Nein', 'Oui', 'Yes']);
  });

  it('a receipt derived plainly from the summary and the outcome, when the backend gave none', () => {
    expect(derivedReceipt('en', 'Cancel order 1002', { ok: false, reason: 'it has already shipped.' })).toBe(
      'Could not cancel order 1002: it has already shipped',
    );
    expect(derivedReceipt('es', 'Cancelar el pedido 1002', { ok: false, reason: 'ya se envió' })).toBe('No se pudo cancelar el pedido 1002: ya se envió');
    expect(derivedReceipt('de', 'Bestellung 1002 stornieren', { ok: false, reason: 'schon versandt' })).toBe(
      'Fehlgeschlagen: Bestellung 1002 stornieren (schon versandt)',
    );
    expect(derivedReceipt(undefined, 'Cancel order 1001', { ok: true })).toBe('Done: Cancel order 1001');
    expect(derivedReceipt('es', 'Cancelar el pedido 1001', { ok: true })).toBe('Hecho: Cancelar el pedido 1001');
    expect(derivedReceipt('en', 'x', { ok: false, reason: 'y'.repeat(900) })).toHaveLength(500);
  });
});

describe('the confirmation summary in the locale', () => {
  it('fills {placeholders} from the arguments; an unknown one stays as written', () => {
    expect(fillSummary('Cancelar el pedido {orderId}', { orderId: '1001' })).toBe('Cancelar el pedido 1001');
    expect(fillSummary('Move {orderId} to {date} ({missing})', { orderId: 7, date: { d: 1 } })).toBe('Move 7 to {"d":1} ({missing})');
    expect(fillSummary('x {a}', null)).toBe('x {a}');
  });

  it("the backend's words first, then the templates, then the built-in English summary", async () => {
    const entry = { description: 'Cancel an order', summary: templates, summarizes: true };
    const asked: string[] = [];
    const ask = async (_: string, args: unknown, locale: string) => (
      asked.push(locale),
      locale === 'es' ? `Anular ${(args as { orderId: string }).orderId}` : undefined
    );
    expect(await localizedSummary(entry, 'cancelOrder', { orderId: '1' }, 'es', { ask })).toBe('Anular 1');
    expect(await localizedSummary(entry, 'cancelOrder', { orderId: '1' }, 'pt-BR', { ask })).toBe('Cancelar o pedido 1');
    expect(await localizedSummary(entry, 'cancelOrder', { orderId: '1' }, undefined, { ask })).toBe('Cancel order 1');
    expect(asked).toEqual(['es', 'pt-BR', 'en']);
    // a backend that fails is a fallback, not a failure
    const failing = async () => Promise.reject(new Error('gone'));
    expect(await localizedSummary(entry, 'cancelOrder', { orderId: '1' }, 'es', { ask: failing })).toBe('Cancelar el pedido 1');
    // not asked unless the function says it words its summary
    expect(await localizedSummary({ description: 'Cancel an order' }, 'cancelOrder', { orderId: '1' }, 'es', { ask })).toBe('Cancel order 1');
    expect(asked).toHaveLength(3);
  });
});

describe("the SDK's receipts", () => {
  it('withReceipt splits into the data and the receipt in the invoke locale; plain results pass untouched', () => {
    const out = withReceipt({ status: 'cancelled' }, { en: 'Order 1001 cancelled', es: 'Pedido 1001 cancelado' });
    expect(splitResult(out, 'es-AR')).toEqual({ data: { status: 'cancelled' }, receipt: 'Pedido 1001 cancelado' });
    expect(splitResult(out, 'ja')).toEqual({ data: { status: 'cancelled' }, receipt: 'Order 1001 cancelled' });
    expect(splitResult(withReceipt(1, 'Done'), undefined)).toEqual({ data: 1, receipt: 'Done' });
    expect(splitResult({ receipt: 'not mine' }, 'en')).toEqual({ data: { receipt: 'not mine' } });
    expect(pickLocalized({ fr: 'Fait' }, 'de')).toBe('Fait');
  });

  it("an error's receipt, a string or per locale; none otherwise", () => {
    expect(errorReceipt(Object.assign(new Error('x'), { receipt: { en: 'No', es: 'No se pudo' } }), 'es')).toBe('No se pudo');
    expect(errorReceipt(Object.assign(new Error('x'), { receipt: '  Shipped already ' }), 'es')).toBe('Shipped already');
    expect(errorReceipt(new Error('x'), 'es')).toBeUndefined();
    expect(errorReceipt('a string', 'es')).toBeUndefined();
  });
});
