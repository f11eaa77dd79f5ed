import { z } from "zod";
import { myTenant } from "../tenancy/schema.ts";

const email = z.email().max(320).transform((value) => value.toLowerCase());

export const signUpBody = z.strictObject({
  email,
  // How strong a password must be is Supabase Auth's policy (supabase/config.toml's
  // minimum_password_length and password_requirements): a weak one, short ones included,
  // is its 422 with its reasons. Auth hashes with bcrypt, which reads at most 72 bytes.
  password: z.string().min(1).max(72),
  fullName: z.string().trim().min(1).max(200).optional(),
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
