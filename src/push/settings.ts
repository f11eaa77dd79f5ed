import type { Logger } from "../logging/logger.ts";
import { isP256PublicKey, withoutPadding } from "./keys.ts";

export type PushSettings = {
  // The VAPID public key (RFC 8292) browsers subscribe with, base64url of the uncompressed
  // P-256 point; null when this deployment sends no Web Push.
  vapidPublicKey: string | null;
  // Whether a subscription's endpoint may be on this machine (localhost, 127.0.0.0/8, ::1),
  // by http as well: only for a local stand-in for a push service, never where the api
  // function serves real users (the worker would post wherever a member pointed it).
  allowLoopbackPushEndpoints: boolean;
};

// From the function's environment: VAPID_PUBLIC_KEY (unset: push is not offered) and
// PUSH_ALLOW_LOOPBACK_HTTP (true or false; unset is false). A key that is not a
// P-256 public key is logged and not offered, as an unusable webhook key refuses every
// post: a browser given it would fail to subscribe. A flag that is neither true nor false
// stops the function, as any other malformed setting does.
export function pushSettingsFrom(env: (name: string) => string | undefined, logger: Pick<Logger, "error">): PushSettings {
  const flag = env("PUSH_ALLOW_LOOPBACK_HTTP") || "false";
  if (flag !== "true" && flag !== "false") throw new Error("PUSH_ALLOW_LOOPBACK_HTTP must be true or false");
  const configured = env("VAPID_PUBLIC_KEY") || null;
  let vapidPublicKey: string | null = null;
  if (configured !== null) {
    const key = withoutPadding(configured.trim());
    if (isP256PublicKey(key)) vapidPublicKey = key;
    else logger.error("the VAPID_PUBLIC_KEY setting is not a P-256 public key in base64url; push is not offered");
  }
  return { vapidPublicKey, allowLoopbackPushEndpoints: flag === "true" };
}
