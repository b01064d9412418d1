// A language tag (BCP 47 shape: `es`, `es-MX`, `pt-BR`): a customer's locale, on the SDK and the widget wire alike.
import { z } from 'zod';

export const LocaleTag = z
  .string()
  .min(2)
  .max(35)
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/, 'a language tag such as es or es-MX');
