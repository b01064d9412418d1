// POST /customers/link (service secret): link a WhatsApp phone number to an
// existing customer, so its WhatsApp messages join that customer and
// proactive messages can reach it on WhatsApp.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireServiceSecret } from '../http/auth.ts';
import { HttpError, parseOr400 } from '../http/errors.ts';
import type { Services } from '../services.ts';
import type { CustomerRepo } from './repo.ts';

export type PhoneNormalizer = (input: string) => string | null;

const LinkBody = z.object({ externalId: z.string().min(1).max(256), phone: z.string().min(3).max(32) });

export async function customersPlugin(app: FastifyInstance, o: { services: Services; customers: CustomerRepo; normalizePhone: PhoneNormalizer }) {
  app.post('/customers/link', { onRequest: requireServiceSecret(() => o.services.secret) }, async (request) => {
    const body = parseOr400(LinkBody, request.body, 'body');
    const phone = o.normalizePhone(body.phone);
    if (!phone) throw new HttpError('validation_failed', 'body.phone: not a phone number (E.164 expected, e.g. +15550003333)');
    // The conflict check and the write are one transaction: two links racing for a phone can't both win.
    const r = await o.customers.linkPhone(body.externalId, phone);
    if (!r.ok && r.reason === 'conflict') throw new HttpError('conflict', `This phone is already linked to customer ${r.ownerExternalId}`);
    if (!r.ok) throw new HttpError('unknown_customer', 'Unknown customer');
    return { customerId: r.customer.customerId, externalId: r.customer.externalId, phone: r.customer.phone };
  });
}
