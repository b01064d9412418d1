// How a conversation calls a tool: a visitor's turn only what it was offered; the customer's locale and whether they
// proved who they are travel in the invoke's context; a confirmed call comes back with the receipt the customer reads
// (the backend's own `receipt`, else one derived plainly from the summary and the outcome).
import type { InvokeOutcome } from '../../machines/conversation.ts';
import type { Config } from '../config/schema.ts';
import { conversationLocale, derivedReceipt } from '../customers/locale.ts';
import type { SdkHub } from '../services.ts';
import { isVerifiedCustomer, isVisitorCustomerId, type Customer } from '../store/model.ts';
import { visitorMayUse } from './llm-step.ts';
import type { HostDeps } from './runtime.ts';

export function createToolInvoker(o: {
  tools: SdkHub;
  customers: { get(customerId: string): Promise<Customer | undefined> };
  config: Config;
}): HostDeps['invokeTool'] {
  const { tools, config } = o;
  return async (input, meta) => {
    // A visitor's turn calls only what it was offered, whatever name the model writes.
    if (isVisitorCustomerId(meta.customerId) && !tools.catalog().some((f) => f.name === input.name && visitorMayUse(f)))
      return { ok: false, error: { code: 'sign_in_required', message: `"${input.name}" needs the customer to sign in first` } };
    const locale = conversationLocale(await o.customers.get(meta.customerId), meta.channel, config.channels.whatsapp.locale);
    const context = {
      customerId: meta.customerId,
      externalId: meta.externalId,
      channel: meta.channel,
      conversationId: meta.conversationId,
      verified: isVerifiedCustomer(meta),
    };
    const outcome: InvokeOutcome = await tools.invoke(input.name, input.args, locale ? Object.assign(context, { locale }) : context, {
      invocationId: input.invocationId,
      timeoutMs: config.safety.invoke_timeout_ms,
    });
    if (!input.confirmed || outcome.receipt) return outcome;
    const summary = input.summary ?? input.name;
    const receipt = derivedReceipt(locale, summary, outcome.ok ? { ok: true } : { ok: false, reason: outcome.error.message });
    return Object.assign({}, outcome, { receipt });
  };
}
