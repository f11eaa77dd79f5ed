import { z } from "zod";
import { email, id, patchOf, text, timestamp } from "../http/schemas.ts";

export const tenantRoles = ["owner", "admin", "staff"] as const;

const settings = {
  name: text(200),
  senderEmail: email.nullable().meta({ description: "The From address of guest email; unset, no email is sent." }),
  senderName: z.string().max(200).nullable(),
  paymentPageBaseUrl: z.url({ protocol: /^https?$/ }).max(500).nullable()
    .meta({ description: "Payment links are this URL followed by the link's token." }),
};

export const createTenantBody = z.strictObject({
  ...settings,
  senderEmail: settings.senderEmail.optional(),
  senderName: settings.senderName.optional(),
  paymentPageBaseUrl: settings.paymentPageBaseUrl.optional(),
}).meta({ id: "TenantCreate" });

export const updateTenantBody = patchOf(settings).meta({ id: "TenantUpdate" });

export const tenant = z.object({
  id,
  name: z.string(),
  senderEmail: z.string().nullable(),
  senderName: z.string().nullable(),
  paymentPageBaseUrl: z.string().nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "Tenant" });

export const myTenant = z.object({ tenantId: id, name: z.string(), role: z.enum(tenantRoles) }).meta({ id: "MyTenant" });

export const member = z.object({
  userId: id,
  email: z.string(),
  fullName: z.string().nullable(),
  role: z.enum(tenantRoles),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "Member" });
// What adding a member answers by default: the member's user id, which names it.
export const createdMember = z.object({ userId: id }).meta({ id: "CreatedMember", description: "The user id of the member just added." });

export const addMemberBody = z.strictObject({
  email: email.transform((value) => value.toLowerCase()),
  role: z.enum(tenantRoles).default("staff"),
}).meta({ id: "MemberAdd" });

export const changeMemberBody = z.strictObject({ role: z.enum(tenantRoles) }).meta({ id: "MemberUpdate" });

export const tenantParams = z.strictObject({ tenantId: id });
export const memberParams = z.strictObject({ tenantId: id, userId: id });
