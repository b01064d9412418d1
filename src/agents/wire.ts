// The agent sign-in API's messages (/api/v1/agents/…), one schema each, shared by the server and the dashboard
// (which imports the types only).
import { z } from 'zod';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.ts';

const Email = z.string().trim().email().max(320);

export const SignInRequest = z.strictObject({ email: Email, password: z.string().min(1).max(MAX_PASSWORD_LENGTH) });
export const CreateAgentRequest = z.strictObject({
  name: z.string().trim().min(1).max(120),
  email: Email,
  role: z.enum(['agent', 'admin']).default('agent'),
});
export const SetPasswordRequest = z.strictObject({
  token: z.string().min(1).max(200),
  password: z.string().min(MIN_PASSWORD_LENGTH, `at least ${MIN_PASSWORD_LENGTH} characters`).max(MAX_PASSWORD_LENGTH),
});
export const CreateKeyRequest = z.strictObject({ name: z.string().trim().min(1).max(120) });

export interface AgentView {
  agentId: string;
  name: string;
  email: string;
  role: 'agent' | 'admin';
  disabled: boolean;
  createdAt: number;
  hasPassword: boolean;
}

/** POST /api/v1/agents/sign-in and GET /api/v1/agents/me (the CSRF token only for a cookie session). */
export interface SignedIn {
  agent: AgentView;
  csrfToken?: string;
  expiresAt?: number;
}
