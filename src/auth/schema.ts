import { z } from "zod";
import { domainRule, email as emailAddress, text } from "../http/schemas.ts";
import { myTenant } from "../tenancy/schema.ts";

// Supabase Auth takes addresses of at most 255 characters.
const email = emailAddress.max(255).transform((value) => value.toLowerCase());

export const signUpBody = z.strictObject({
  email,
  // How strong a password must be is Supabase Auth's policy (supabase/config.toml's
  // minimum_password_length and password_requirements): a weak one, short ones included,
  // is its 422 with its reasons. Auth hashes with bcrypt, which reads at most 72 bytes: a
  // longer one is refused here, in bytes, as a 422 (JSON Schema can only count characters).
  password: z.string().min(1).max(72).refine((password) => new TextEncoder().encode(password).length <= 72, {
    message: "The password is longer than 72 bytes in UTF-8.", params: domainRule,
  }).meta({ description: "At most 72 bytes in UTF-8 (a 422 beyond); how strong it must be is Supabase Auth's policy." }),
  fullName: text(200).optional(),
}).meta({ id: "SignUp" });

export const signInBody = z.strictObject({
  email,
  password: z.string().min(1).max(72),
}).meta({ id: "SignIn" });

export const refreshBody = z.strictObject({
  refreshToken: z.string().min(1).max(512),
}).meta({ id: "Refresh" });

export const user = z.object({
  id: z.uuid(),
  email: z.string(),
  fullName: z.string().nullable(),
  createdAt: z.string(),
}).meta({ id: "User" });

export const session = z.object({
  accessToken: z.string().meta({ description: "Send it as Authorization: Bearer <accessToken>." }),
  refreshToken: z.string(),
  tokenType: z.literal("bearer"),
  expiresIn: z.number().int(),
  expiresAt: z.number().int(),
  user,
}).meta({ id: "Session" });

export const signUpResult = z.object({ user, session: session.nullable() }).meta({ id: "SignUpResult" });

export const me = z.object({ user, memberships: z.array(myTenant) }).meta({ id: "Me" });

export type SignUpInput = z.infer<typeof signUpBody>;
export type SignInInput = z.infer<typeof signInBody>;
