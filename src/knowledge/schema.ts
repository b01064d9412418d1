// The knowledge routes' wire messages: one schema each, read by the routes and by `parley knowledge import`.
import { z } from 'zod';

export const ArticleInputSchema = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'letters, digits, ".", "_", ":" and "-", at most 128 characters')
    .optional(),
  title: z.string().trim().min(1).max(500),
  url: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//i.test(u), { message: 'must be an http(s) URL' })
    .optional(),
  body: z.string().max(2_000_000),
  format: z.enum(['markdown', 'html', 'text']),
  locale: z
    .string()
    .regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/, 'a language tag such as "en" or "pt-BR"')
    .optional(),
  tags: z.array(z.string().min(1).max(100)).max(50).optional(),
});
export type ArticleInputWire = z.infer<typeof ArticleInputSchema>;

export const UpsertAnswerSchema = z.object({ id: z.string(), created: z.boolean(), chunks: z.number().int() });
export type UpsertAnswer = z.infer<typeof UpsertAnswerSchema>;

const count = (max: number) => z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(max));

export const ListQuerySchema = z.strictObject({ limit: count(200).optional(), cursor: z.string().min(1).optional() });

export const SearchQuerySchema = z.strictObject({
  q: z.string().trim().min(1).max(1000),
  locale: z
    .string()
    .regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/)
    .optional(),
  limit: count(50).optional(),
});

export const IdParamsSchema = z.strictObject({ id: z.string().min(1).max(200) });
