import { z } from "zod";

const email = z.email().max(320).transform((value) => value.toLowerCase());

export const signUpBody = z.strictObject({
  email,
  // Supabase Auth hashes with bcrypt, which reads at most 72 bytes.
  password: z.string().min(8).max(72),
  fullName: z.string().trim().min(1).max(200).optional(),
});

export const signInBody = z.strictObject({
  email,
  password: z.string().min(1).max(72),
});

export const refreshBody = z.strictObject({
  refreshToken: z.string().min(1).max(512),
});

export type SignUpInput = z.infer<typeof signUpBody>;
export type SignInInput = z.infer<typeof signInBody>;
