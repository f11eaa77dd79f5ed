export type Json = string | number | boolean | null | {
  [key: string]: Json | undefined;
} | Json[];

export type Database = {
  "public": {
    Tables: {
      "access_codes": {
        Row: {
          "code": string;
          "created_at": string;
          "created_by": string | null;
          "id": string;
          "property_id": string;
          "reservation_id": string;
          "revoked_at": string | null;
          "status": string;
          "tenant_id": string;
          "updated_at": string;
          "valid_from": string;
          "valid_until": string;
        };
        ComputedFields: never;
        Insert: {
          "code"?: string;
          "created_at"?: string;
          "created_by"?: string | null;
          "id"?: string;
          "property_id": string;
          "reservation_id": string;
          "revoked_at"?: string | null;
          "status"?: string;
          "tenant_id"?: string;
          "updated_at"?: string;
          "valid_from": string;
          "valid_until": string;
        };
        Update: {
          "code"?: string;
          "created_at"?: string;
          "created_by"?: string | null;
          "id"?: string;
          "property_id"?: string;
          "reservation_id"?: string;
          "revoked_at"?: string | null;
          "status"?: string;
          "tenant_id"?: string;
          "updated_at"?: string;
          "valid_from"?: string;
          "valid_until"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "access_codes_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName:
              "access_codes_tenant_id_property_id_reservation_id_fkey";
            columns: ["tenant_id", "property_id", "reservation_id"];
            isOneToOne: false;
            referencedRelation: "reservations";
            referencedColumns: ["tenant_id", "property_id", "id"];
          },
        ];
      };
      "api_key_properties": {
        Row: {
          "api_key_id": string;
          "created_at": string;
          "property_id": string;
          "tenant_id": string;
        };
        ComputedFields: never;
        Insert: {
          "api_key_id": string;
          "created_at"?: string;
          "property_id": string;
          "tenant_id"?: string;
        };
        Update: {
          "api_key_id"?: string;
          "created_at"?: string;
          "property_id"?: string;
          "tenant_id"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "api_key_properties_tenant_id_api_key_id_fkey";
            columns: ["tenant_id", "api_key_id"];
            isOneToOne: false;
            referencedRelation: "api_keys";
            referencedColumns: ["tenant_id", "id"];
          },
          {
            foreignKeyName: "api_key_properties_tenant_id_property_id_fkey";
            columns: ["tenant_id", "property_id"];
            isOneToOne: false;
            referencedRelation: "properties";
            referencedColumns: ["tenant_id", "id"];
          },
        ];
      };
      "api_key_request_windows": {
        Row: {
          "api_key_id": string;
          "requests": number;
          "tenant_id": string;
          "window_start": string;
        };
        ComputedFields: never;
        Insert: {
          "api_key_id": string;
          "requests": number;
          "tenant_id": string;
          "window_start": string;
        };
        Update: {
          "api_key_id"?: string;
          "requests"?: number;
          "tenant_id"?: string;
          "window_start"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "api_key_request_windows_tenant_id_api_key_id_fkey";
            columns: ["tenant_id", "api_key_id"];
            isOneToOne: true;
            referencedRelation: "api_keys";
            referencedColumns: ["tenant_id", "id"];
          },
          {
            foreignKeyName: "api_key_request_windows_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
        ];
      };
      "api_keys": {
        Row: {
          "all_properties": boolean;
          "created_at": string;
          "created_by": string | null;
          "expires_at": string | null;
          "id": string;
          "key_id": string;
          "last_four": string;
          "last_used_at": string | null;
          "name": string;
          "rate_limit": number;
          "rate_limit_window_seconds": number;
          "revoked_at": string | null;
          "scopes": (string)[];
          "secret_hash": string;
          "tenant_id": string;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "all_properties"?: boolean;
          "created_at"?: string;
          "created_by"?: string | null;
          "expires_at"?: string | null;
          "id"?: string;
          "key_id": string;
          "last_four": string;
          "last_used_at"?: string | null;
          "name": string;
          "rate_limit"?: number;
          "rate_limit_window_seconds"?: number;
          "revoked_at"?: string | null;
          "scopes"?: (string)[];
          "secret_hash": string;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Update: {
          "all_properties"?: boolean;
          "created_at"?: string;
          "created_by"?: string | null;
          "expires_at"?: string | null;
          "id"?: string;
          "key_id"?: string;
          "last_four"?: string;
          "last_used_at"?: string | null;
          "name"?: string;
          "rate_limit"?: number;
          "rate_limit_window_seconds"?: number;
          "revoked_at"?: string | null;
          "scopes"?: (string)[];
          "secret_hash"?: string;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "api_keys_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
        ];
      };
      "ari_changes": {
        Row: {
          "changed_at": string;
          "first_day": string | null;
          "id": number;
          "kind": string;
          "last_day": string | null;
          "property_id": string;
          "subject_id": string;
          "tenant_id": string;
          "transaction_id": unknown;
        };
        ComputedFields: never;
        Insert: {
          "changed_at"?: string;
          "first_day"?: string | null;
          "id"?: never;
          "kind": string;
          "last_day"?: string | null;
          "property_id": string;
          "subject_id": string;
          "tenant_id": string;
          "transaction_id"?: unknown;
        };
        Update: {
          "changed_at"?: string;
          "first_day"?: string | null;
          "id"?: never;
          "kind"?: string;
          "last_day"?: string | null;
          "property_id"?: string;
          "subject_id"?: string;
          "tenant_id"?: string;
          "transaction_id"?: unknown;
        };
        Relationships: [
          {
            foreignKeyName: "ari_changes_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "ari_changes_tenant_id_property_id_fkey";
            columns: ["tenant_id", "property_id"];
            isOneToOne: false;
            referencedRelation: "properties";
            referencedColumns: ["tenant_id", "id"];
          },
        ];
      };
      "calendar_feeds": {
        Row: {
          "created_at": string;
          "created_by": string | null;
          "id": string;
          "last_four": string;
          "name": string;
          "property_id": string;
          "revoked_at": string | null;
          "room_type_id": string | null;
          "tenant_id": string;
          "token_hash": string;
          "unit_id": string | null;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "created_at"?: string;
          "created_by"?: string | null;
          "id"?: string;
          "last_four": string;
          "name": string;
          "property_id": string;
          "revoked_at"?: string | null;
          "room_type_id"?: string | null;
          "tenant_id"?: string;
          "token_hash": string;
          "unit_id"?: string | null;
          "updated_at"?: string;
        };
        Update: {
          "created_at"?: string;
          "created_by"?: string | null;
          "id"?: string;
          "last_four"?: string;
          "name"?: string;
          "property_id"?: string;
          "revoked_at"?: string | null;
          "room_type_id"?: string | null;
          "tenant_id"?: string;
          "token_hash"?: string;
          "unit_id"?: string | null;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "calendar_feeds_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName:
              "calendar_feeds_tenant_id_property_id_room_type_id_fkey";
            columns: ["tenant_id", "property_id", "room_type_id"];
            isOneToOne: false;
            referencedRelation: "room_types";
            referencedColumns: ["tenant_id", "property_id", "id"];
          },
          {
            foreignKeyName: "calendar_feeds_tenant_id_property_id_unit_id_fkey";
            columns: ["tenant_id", "property_id", "unit_id"];
            isOneToOne: false;
            referencedRelation: "units";
            referencedColumns: ["tenant_id", "property_id", "id"];
          },
        ];
      };
      "calendar_imports": {
        Row: {
          "conflicts": NonNullable<Json>;
          "created_at": string;
          "created_by": string | null;
          "etag": string | null;
          "events": number;
          "failing_since": string | null;
          "failures": number;
          "id": string;
          "last_error": string | null;
          "last_error_code": string | null;
          "last_fetched_at": string | null;
          "last_modified": string | null;
          "last_outcome": string | null;
          "last_succeeded_at": string | null;
          "name": string;
          "next_fetch_at": string;
          "property_id": string;
          "reported_at": string | null;
          "tenant_id": string;
          "unit_id": string;
          "updated_at": string;
          "url": string;
        };
        ComputedFields: never;
        Insert: {
          "conflicts"?: NonNullable<Json>;
          "created_at"?: string;
          "created_by"?: string | null;
          "etag"?: string | null;
          "events"?: number;
          "failing_since"?: string | null;
          "failures"?: number;
          "id"?: string;
          "last_error"?: string | null;
          "last_error_code"?: string | null;
          "last_fetched_at"?: string | null;
          "last_modified"?: string | null;
          "last_outcome"?: string | null;
          "last_succeeded_at"?: string | null;
          "name": string;
          "next_fetch_at"?: string;
          "property_id": string;
          "reported_at"?: string | null;
          "tenant_id"?: string;
          "unit_id": string;
          "updated_at"?: string;
          "url": string;
        };
        Update: {
          "conflicts"?: NonNullable<Json>;
          "created_at"?: string;
          "created_by"?: string | null;
          "etag"?: string | null;
          "events"?: number;
          "failing_since"?: string | null;
          "failures"?: number;
          "id"?: string;
          "last_error"?: string | null;
          "last_error_code"?: string | null;
          "last_fetched_at"?: string | null;
          "last_modified"?: string | null;
          "last_outcome"?: string | null;
          "last_succeeded_at"?: string | null;
          "name"?: string;
          "next_fetch_at"?: string;
          "property_id"?: string;
          "reported_at"?: string | null;
          "tenant_id"?: string;
          "unit_id"?: string;
          "updated_at"?: string;
          "url"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "calendar_imports_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName:
              "calendar_imports_tenant_id_property_id_unit_id_fkey";
            columns: ["tenant_id", "property_id", "unit_id"];
            isOneToOne: false;
            referencedRelation: "units";
            referencedColumns: ["tenant_id", "property_id", "id"];
          },
        ];
      };
      "guests": {
        Row: {
          "country_code": string | null;
          "created_at": string;
          "created_by": string | null;
          "email": string | null;
          "email_undeliverable_at": string | null;
          "email_undeliverable_cleared_at": string | null;
          "email_undeliverable_reason": string | null;
          "first_name": string;
          "id": string;
          "last_name": string;
          "locale": string;
          "marketing_consent": boolean;
          "marketing_consent_at": string | null;
          "notes": string | null;
          "phone": string | null;
          "tenant_id": string;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "country_code"?: string | null;
          "created_at"?: string;
          "created_by"?: string | null;
          "email"?: string | null;
          "email_undeliverable_at"?: string | null;
          "email_undeliverable_cleared_at"?: string | null;
          "email_undeliverable_reason"?: string | null;
          "first_name": string;
          "id"?: string;
          "last_name": string;
          "locale"?: string;
          "marketing_consent"?: boolean;
          "marketing_consent_at"?: string | null;
          "notes"?: string | null;
          "phone"?: string | null;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Update: {
          "country_code"?: string | null;
          "created_at"?: string;
          "created_by"?: string | null;
          "email"?: string | null;
          "email_undeliverable_at"?: string | null;
          "email_undeliverable_cleared_at"?: string | null;
          "email_undeliverable_reason"?: string | null;
          "first_name"?: string;
          "id"?: string;
          "last_name"?: string;
          "locale"?: string;
          "marketing_consent"?: boolean;
          "marketing_consent_at"?: string | null;
          "notes"?: string | null;
          "phone"?: string | null;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "guests_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
        ];
      };
      "idempotency_keys": {
        Row: {
          "api_key_id": string;
          "created_at": string;
          "key": string;
          "request_hash": string;
          "response_body": string | null;
          "response_headers": NonNullable<Json>;
          "response_status": number | null;
          "tenant_id": string;
        };
        ComputedFields: never;
        Insert: {
          "api_key_id"?: string;
          "created_at"?: string;
          "key": string;
          "request_hash": string;
          "response_body"?: string | null;
          "response_headers"?: NonNullable<Json>;
          "response_status"?: number | null;
          "tenant_id"?: string;
        };
        Update: {
          "api_key_id"?: string;
          "created_at"?: string;
          "key"?: string;
          "request_hash"?: string;
          "response_body"?: string | null;
          "response_headers"?: NonNullable<Json>;
          "response_status"?: number | null;
          "tenant_id"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "idempotency_keys_tenant_id_api_key_id_fkey";
            columns: ["tenant_id", "api_key_id"];
            isOneToOne: false;
            referencedRelation: "api_keys";
            referencedColumns: ["tenant_id", "id"];
          },
          {
            foreignKeyName: "idempotency_keys_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
        ];
      };
      "inbox_messages": {
        Row: {
          "body": string;
          "created_at": string;
          "id": string;
          "notification_id": string;
          "read_at": string | null;
          "template_key": string;
          "tenant_id": string;
          "title": string;
          "url": string | null;
          "user_id": string;
        };
        ComputedFields: never;
        Insert: {
          "body": string;
          "created_at"?: string;
          "id"?: string;
          "notification_id": string;
          "read_at"?: string | null;
          "template_key": string;
          "tenant_id": string;
          "title": string;
          "url"?: string | null;
          "user_id": string;
        };
        Update: {
          "body"?: string;
          "created_at"?: string;
          "id"?: string;
          "notification_id"?: string;
          "read_at"?: string | null;
          "template_key"?: string;
          "tenant_id"?: string;
          "title"?: string;
          "url"?: string | null;
          "user_id"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "inbox_messages_tenant_id_notification_id_fkey";
            columns: ["tenant_id", "notification_id"];
            isOneToOne: false;
            referencedRelation: "notifications";
            referencedColumns: ["tenant_id", "id"];
          },
          {
            foreignKeyName: "inbox_messages_tenant_id_user_id_fkey";
            columns: ["tenant_id", "user_id"];
            isOneToOne: false;
            referencedRelation: "tenant_memberships";
            referencedColumns: ["tenant_id", "user_id"];
          },
        ];
      };
      "nightly_summaries": {
        Row: {
          "business_date": string;
          "created_at": string;
          "figures": NonNullable<Json>;
          "tenant_id": string;
        };
        ComputedFields: never;
        Insert: {
          "business_date": string;
          "created_at"?: string;
          "figures": NonNullable<Json>;
          "tenant_id": string;
        };
        Update: {
          "business_date"?: string;
          "created_at"?: string;
          "figures"?: NonNullable<Json>;
          "tenant_id"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "nightly_summaries_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
        ];
      };
      "notification_events": {
        Row: {
          "code": string | null;
          "created_at": string;
          "delivery_state": string | null;
          "event": string;
          "id": string;
          "notification_id": string;
          "occurred_at": string;
          "provider": string;
          "provider_event_id": string;
          "reason": string | null;
          "tenant_id": string;
        };
        ComputedFields: never;
        Insert: {
          "code"?: string | null;
          "created_at"?: string;
          "delivery_state"?: string | null;
          "event": string;
          "id"?: string;
          "notification_id": string;
          "occurred_at": string;
          "provider": string;
          "provider_event_id": string;
          "reason"?: string | null;
          "tenant_id": string;
        };
        Update: {
          "code"?: string | null;
          "created_at"?: string;
          "delivery_state"?: string | null;
          "event"?: string;
          "id"?: string;
          "notification_id"?: string;
          "occurred_at"?: string;
          "provider"?: string;
          "provider_event_id"?: string;
          "reason"?: string | null;
          "tenant_id"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "notification_events_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName:
              "notification_events_tenant_id_notification_id_fkey";
            columns: ["tenant_id", "notification_id"];
            isOneToOne: false;
            referencedRelation: "notifications";
            referencedColumns: ["tenant_id", "id"];
          },
        ];
      };
      "notification_preferences": {
        Row: {
          "channel": string;
          "created_at": string;
          "enabled": boolean;
          "template_key": string;
          "tenant_id": string;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "channel": string;
          "created_at"?: string;
          "enabled": boolean;
          "template_key": string;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Update: {
          "channel"?: string;
          "created_at"?: string;
          "enabled"?: boolean;
          "template_key"?: string;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "notification_preferences_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
        ];
      };
      "notifications": {
        Row: {
          "access_code_id": string | null;
          "attempts": number;
          "body": string;
          "channel": string;
          "context": Json | null;
          "created_at": string;
          "delivery_code": string | null;
          "delivery_reason": string | null;
          "delivery_state": string | null;
          "delivery_state_at": string | null;
          "id": string;
          "provider_message_id": string | null;
          "recipient_address": string | null;
          "recipient_id": string | null;
          "recipient_type": string;
          "reservation_id": string | null;
          "send_started_at": string | null;
          "sent_at": string | null;
          "status": string;
          "status_reason": string | null;
          "subject": string | null;
          "template_key": string;
          "tenant_id": string;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "access_code_id"?: string | null;
          "attempts"?: number;
          "body"?: string;
          "channel": string;
          "context"?: Json | null;
          "created_at"?: string;
          "delivery_code"?: string | null;
          "delivery_reason"?: string | null;
          "delivery_state"?: string | null;
          "delivery_state_at"?: string | null;
          "id"?: string;
          "provider_message_id"?: string | null;
          "recipient_address"?: string | null;
          "recipient_id"?: string | null;
          "recipient_type": string;
          "reservation_id"?: string | null;
          "send_started_at"?: string | null;
          "sent_at"?: string | null;
          "status"?: string;
          "status_reason"?: string | null;
          "subject"?: string | null;
          "template_key": string;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Update: {
          "access_code_id"?: string | null;
          "attempts"?: number;
          "body"?: string;
          "channel"?: string;
          "context"?: Json | null;
          "created_at"?: string;
          "delivery_code"?: string | null;
          "delivery_reason"?: string | null;
          "delivery_state"?: string | null;
          "delivery_state_at"?: string | null;
          "id"?: string;
          "provider_message_id"?: string | null;
          "recipient_address"?: string | null;
          "recipient_id"?: string | null;
          "recipient_type"?: string;
          "reservation_id"?: string | null;
          "send_started_at"?: string | null;
          "sent_at"?: string | null;
          "status"?: string;
          "status_reason"?: string | null;
          "subject"?: string | null;
          "template_key"?: string;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "notifications_tenant_id_access_code_id_fkey";
            columns: ["tenant_id", "access_code_id"];
            isOneToOne: false;
            referencedRelation: "access_codes";
            referencedColumns: ["tenant_id", "id"];
          },
          {
            foreignKeyName: "notifications_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "notifications_tenant_id_reservation_id_fkey";
            columns: ["tenant_id", "reservation_id"];
            isOneToOne: false;
            referencedRelation: "reservations";
            referencedColumns: ["tenant_id", "id"];
          },
        ];
      };
      "payment_links": {
        Row: {
          "amount": number;
          "cancelled_at": string | null;
          "created_at": string;
          "created_by": string | null;
          "currency": string;
          "description": string | null;
          "expires_at": string;
          "id": string;
          "paid_at": string | null;
          "reservation_id": string;
          "status": string;
          "tenant_id": string;
          "token": string;
          "updated_at": string;
          "url": string | null;
        };
        ComputedFields: never;
        Insert: {
          "amount": number;
          "cancelled_at"?: string | null;
          "created_at"?: string;
          "created_by"?: string | null;
          "currency": string;
          "description"?: string | null;
          "expires_at"?: string;
          "id"?: string;
          "paid_at"?: string | null;
          "reservation_id": string;
          "status"?: string;
          "tenant_id"?: string;
          "token"?: string;
          "updated_at"?: string;
          "url"?: string | null;
        };
        Update: {
          "amount"?: number;
          "cancelled_at"?: string | null;
          "created_at"?: string;
          "created_by"?: string | null;
          "currency"?: string;
          "description"?: string | null;
          "expires_at"?: string;
          "id"?: string;
          "paid_at"?: string | null;
          "reservation_id"?: string;
          "status"?: string;
          "tenant_id"?: string;
          "token"?: string;
          "updated_at"?: string;
          "url"?: string | null;
        };
        Relationships: [
          {
            foreignKeyName: "payment_links_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName:
              "payment_links_tenant_id_reservation_id_currency_fkey";
            columns: ["tenant_id", "reservation_id", "currency"];
            isOneToOne: false;
            referencedRelation: "reservations";
            referencedColumns: ["tenant_id", "id", "currency"];
          },
        ];
      };
      "payments": {
        Row: {
          "amount": number;
          "created_at": string;
          "created_by": string | null;
          "currency": string;
          "external_reference": string | null;
          "id": string;
          "method": string;
          "notes": string | null;
          "payment_link_id": string | null;
          "received_at": string;
          "reservation_id": string;
          "source": string;
          "tenant_id": string;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "amount": number;
          "created_at"?: string;
          "created_by"?: string | null;
          "currency": string;
          "external_reference"?: string | null;
          "id"?: string;
          "method"?: string;
          "notes"?: string | null;
          "payment_link_id"?: string | null;
          "received_at"?: string;
          "reservation_id": string;
          "source"?: string;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Update: {
          "amount"?: number;
          "created_at"?: string;
          "created_by"?: string | null;
          "currency"?: string;
          "external_reference"?: string | null;
          "id"?: string;
          "method"?: string;
          "notes"?: string | null;
          "payment_link_id"?: string | null;
          "received_at"?: string;
          "reservation_id"?: string;
          "source"?: string;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "payments_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "payments_tenant_id_reservation_id_currency_fkey";
            columns: ["tenant_id", "reservation_id", "currency"];
            isOneToOne: false;
            referencedRelation: "reservations";
            referencedColumns: ["tenant_id", "id", "currency"];
          },
          {
            foreignKeyName:
              "payments_tenant_id_reservation_id_payment_link_id_fkey";
            columns: ["tenant_id", "reservation_id", "payment_link_id"];
            isOneToOne: false;
            referencedRelation: "payment_links";
            referencedColumns: ["tenant_id", "reservation_id", "id"];
          },
        ];
      };
      "properties": {
        Row: {
          "address_line1": string | null;
          "address_line2": string | null;
          "check_in_time": string;
          "check_out_time": string;
          "city": string | null;
          "country_code": string | null;
          "created_at": string;
          "created_by": string | null;
          "currency": string;
          "email": string | null;
          "id": string;
          "name": string;
          "phone": string | null;
          "postal_code": string | null;
          "region": string | null;
          "status": string;
          "tenant_id": string;
          "timezone": string;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "address_line1"?: string | null;
          "address_line2"?: string | null;
          "check_in_time"?: string;
          "check_out_time"?: string;
          "city"?: string | null;
          "country_code"?: string | null;
          "created_at"?: string;
          "created_by"?: string | null;
          "currency": string;
          "email"?: string | null;
          "id"?: string;
          "name": string;
          "phone"?: string | null;
          "postal_code"?: string | null;
          "region"?: string | null;
          "status"?: string;
          "tenant_id"?: string;
          "timezone": string;
          "updated_at"?: string;
        };
        Update: {
          "address_line1"?: string | null;
          "address_line2"?: string | null;
          "check_in_time"?: string;
          "check_out_time"?: string;
          "city"?: string | null;
          "country_code"?: string | null;
          "created_at"?: string;
          "created_by"?: string | null;
          "currency"?: string;
          "email"?: string | null;
          "id"?: string;
          "name"?: string;
          "phone"?: string | null;
          "postal_code"?: string | null;
          "region"?: string | null;
          "status"?: string;
          "tenant_id"?: string;
          "timezone"?: string;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "properties_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
        ];
      };
      "push_subscriptions": {
        Row: {
          "auth": string;
          "created_at": string;
          "endpoint": string;
          "expires_at": string | null;
          "id": string;
          "last_accepted_at": string | null;
          "p256dh": string;
          "tenant_id": string;
          "updated_at": string;
          "user_agent": string | null;
          "user_id": string;
        };
        ComputedFields: never;
        Insert: {
          "auth": string;
          "created_at"?: string;
          "endpoint": string;
          "expires_at"?: string | null;
          "id"?: string;
          "last_accepted_at"?: string | null;
          "p256dh": string;
          "tenant_id"?: string;
          "updated_at"?: string;
          "user_agent"?: string | null;
          "user_id": string;
        };
        Update: {
          "auth"?: string;
          "created_at"?: string;
          "endpoint"?: string;
          "expires_at"?: string | null;
          "id"?: string;
          "last_accepted_at"?: string | null;
          "p256dh"?: string;
          "tenant_id"?: string;
          "updated_at"?: string;
          "user_agent"?: string | null;
          "user_id"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "push_subscriptions_tenant_id_user_id_fkey";
            columns: ["tenant_id", "user_id"];
            isOneToOne: false;
            referencedRelation: "tenant_memberships";
            referencedColumns: ["tenant_id", "user_id"];
          },
        ];
      };
      "rate_plan_days": {
        Row: {
          "closed": boolean | null;
          "closed_to_arrival": boolean | null;
          "closed_to_departure": boolean | null;
          "created_at": string;
          "day": string;
          "extra_adult_price": number | null;
          "extra_child_price": number | null;
          "max_stay": number | null;
          "min_stay": number | null;
          "price": number | null;
          "rate_plan_id": string;
          "tenant_id": string;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "closed"?: boolean | null;
          "closed_to_arrival"?: boolean | null;
          "closed_to_departure"?: boolean | null;
          "created_at"?: string;
          "day": string;
          "extra_adult_price"?: number | null;
          "extra_child_price"?: number | null;
          "max_stay"?: number | null;
          "min_stay"?: number | null;
          "price"?: number | null;
          "rate_plan_id": string;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Update: {
          "closed"?: boolean | null;
          "closed_to_arrival"?: boolean | null;
          "closed_to_departure"?: boolean | null;
          "created_at"?: string;
          "day"?: string;
          "extra_adult_price"?: number | null;
          "extra_child_price"?: number | null;
          "max_stay"?: number | null;
          "min_stay"?: number | null;
          "price"?: number | null;
          "rate_plan_id"?: string;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "rate_plan_days_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "rate_plan_days_tenant_id_rate_plan_id_fkey";
            columns: ["tenant_id", "rate_plan_id"];
            isOneToOne: false;
            referencedRelation: "rate_plans";
            referencedColumns: ["tenant_id", "id"];
          },
        ];
      };
      "rate_plans": {
        Row: {
          "active": boolean;
          "cancellation_policy": string;
          "code": string;
          "created_at": string;
          "created_by": string | null;
          "currency": string;
          "derived_amount": number | null;
          "derived_from_id": string | null;
          "derived_percent": number | null;
          "extra_adult_price": number;
          "extra_child_price": number;
          "free_cancellation_hours": number | null;
          "id": string;
          "max_stay": number | null;
          "min_stay": number;
          "name": string;
          "nightly_price": number;
          "property_id": string;
          "room_type_id": string | null;
          "tenant_id": string;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "active"?: boolean;
          "cancellation_policy"?: string;
          "code": string;
          "created_at"?: string;
          "created_by"?: string | null;
          "currency": string;
          "derived_amount"?: number | null;
          "derived_from_id"?: string | null;
          "derived_percent"?: number | null;
          "extra_adult_price"?: number;
          "extra_child_price"?: number;
          "free_cancellation_hours"?: number | null;
          "id"?: string;
          "max_stay"?: number | null;
          "min_stay"?: number;
          "name": string;
          "nightly_price": number;
          "property_id": string;
          "room_type_id"?: string | null;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Update: {
          "active"?: boolean;
          "cancellation_policy"?: string;
          "code"?: string;
          "created_at"?: string;
          "created_by"?: string | null;
          "currency"?: string;
          "derived_amount"?: number | null;
          "derived_from_id"?: string | null;
          "derived_percent"?: number | null;
          "extra_adult_price"?: number;
          "extra_child_price"?: number;
          "free_cancellation_hours"?: number | null;
          "id"?: string;
          "max_stay"?: number | null;
          "min_stay"?: number;
          "name"?: string;
          "nightly_price"?: number;
          "property_id"?: string;
          "room_type_id"?: string | null;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "rate_plans_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName:
              "rate_plans_tenant_id_property_id_derived_from_id_currency_fkey";
            columns: [
              "tenant_id",
              "property_id",
              "derived_from_id",
              "currency",
            ];
            isOneToOne: false;
            referencedRelation: "rate_plans";
            referencedColumns: ["tenant_id", "property_id", "id", "currency"];
          },
          {
            foreignKeyName: "rate_plans_tenant_id_property_id_fkey";
            columns: ["tenant_id", "property_id"];
            isOneToOne: false;
            referencedRelation: "properties";
            referencedColumns: ["tenant_id", "id"];
          },
          {
            foreignKeyName:
              "rate_plans_tenant_id_property_id_room_type_id_fkey";
            columns: ["tenant_id", "property_id", "room_type_id"];
            isOneToOne: false;
            referencedRelation: "room_types";
            referencedColumns: ["tenant_id", "property_id", "id"];
          },
        ];
      };
      "reservation_status_tallies": {
        Row: {
          "property_id": string;
          "reservations": number;
          "status": string;
          "tenant_id": string;
        };
        ComputedFields: never;
        Insert: {
          "property_id": string;
          "reservations": number;
          "status": string;
          "tenant_id": string;
        };
        Update: {
          "property_id"?: string;
          "reservations"?: number;
          "status"?: string;
          "tenant_id"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "reservation_status_tallies_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName:
              "reservation_status_tallies_tenant_id_property_id_fkey";
            columns: ["tenant_id", "property_id"];
            isOneToOne: false;
            referencedRelation: "properties";
            referencedColumns: ["tenant_id", "id"];
          },
        ];
      };
      "reservations": {
        Row: {
          "adults": number;
          "amount_paid": number;
          "balance": number | null;
          "cancellation_reason": string | null;
          "cancelled_at": string | null;
          "channel": string | null;
          "check_in": string;
          "check_out": string;
          "checked_in_at": string | null;
          "checked_out_at": string | null;
          "children": number;
          "confirmation_code": string;
          "confirmed_at": string | null;
          "created_at": string;
          "created_by": string | null;
          "currency": string;
          "external_reference": string | null;
          "guest_id": string;
          "id": string;
          "no_show_at": string | null;
          "notes": string | null;
          "price_overridden": boolean;
          "property_id": string;
          "rate_plan_id": string | null;
          "room_type_id": string | null;
          "source": string;
          "status": string;
          "stay": unknown;
          "tenant_id": string;
          "total_amount": number;
          "unit_id": string | null;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "adults"?: number;
          "amount_paid"?: number;
          "balance"?: never;
          "cancellation_reason"?: string | null;
          "cancelled_at"?: string | null;
          "channel"?: string | null;
          "check_in": string;
          "check_out": string;
          "checked_in_at"?: string | null;
          "checked_out_at"?: string | null;
          "children"?: number;
          "confirmation_code"?: string;
          "confirmed_at"?: string | null;
          "created_at"?: string;
          "created_by"?: string | null;
          "currency": string;
          "external_reference"?: string | null;
          "guest_id": string;
          "id"?: string;
          "no_show_at"?: string | null;
          "notes"?: string | null;
          "price_overridden"?: boolean;
          "property_id": string;
          "rate_plan_id"?: string | null;
          "room_type_id"?: string | null;
          "source"?: string;
          "status"?: string;
          "stay"?: never;
          "tenant_id"?: string;
          "total_amount": number;
          "unit_id"?: string | null;
          "updated_at"?: string;
        };
        Update: {
          "adults"?: number;
          "amount_paid"?: number;
          "balance"?: never;
          "cancellation_reason"?: string | null;
          "cancelled_at"?: string | null;
          "channel"?: string | null;
          "check_in"?: string;
          "check_out"?: string;
          "checked_in_at"?: string | null;
          "checked_out_at"?: string | null;
          "children"?: number;
          "confirmation_code"?: string;
          "confirmed_at"?: string | null;
          "created_at"?: string;
          "created_by"?: string | null;
          "currency"?: string;
          "external_reference"?: string | null;
          "guest_id"?: string;
          "id"?: string;
          "no_show_at"?: string | null;
          "notes"?: string | null;
          "price_overridden"?: boolean;
          "property_id"?: string;
          "rate_plan_id"?: string | null;
          "room_type_id"?: string | null;
          "source"?: string;
          "status"?: string;
          "stay"?: never;
          "tenant_id"?: string;
          "total_amount"?: number;
          "unit_id"?: string | null;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "reservations_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "reservations_tenant_id_guest_id_fkey";
            columns: ["tenant_id", "guest_id"];
            isOneToOne: false;
            referencedRelation: "guests";
            referencedColumns: ["tenant_id", "id"];
          },
          {
            foreignKeyName: "reservations_tenant_id_property_id_fkey";
            columns: ["tenant_id", "property_id"];
            isOneToOne: false;
            referencedRelation: "properties";
            referencedColumns: ["tenant_id", "id"];
          },
          {
            foreignKeyName:
              "reservations_tenant_id_property_id_rate_plan_id_currency_fkey";
            columns: ["tenant_id", "property_id", "rate_plan_id", "currency"];
            isOneToOne: false;
            referencedRelation: "rate_plans";
            referencedColumns: ["tenant_id", "property_id", "id", "currency"];
          },
          {
            foreignKeyName:
              "reservations_tenant_id_property_id_room_type_id_fkey";
            columns: ["tenant_id", "property_id", "room_type_id"];
            isOneToOne: false;
            referencedRelation: "room_types";
            referencedColumns: ["tenant_id", "property_id", "id"];
          },
          {
            foreignKeyName: "reservations_tenant_id_property_id_unit_id_fkey";
            columns: ["tenant_id", "property_id", "unit_id"];
            isOneToOne: false;
            referencedRelation: "units";
            referencedColumns: ["tenant_id", "property_id", "id"];
          },
        ];
      };
      "room_types": {
        Row: {
          "code": string;
          "created_at": string;
          "created_by": string | null;
          "description": string | null;
          "id": string;
          "max_adults": number | null;
          "max_children": number | null;
          "max_occupancy": number;
          "name": string;
          "property_id": string;
          "standard_occupancy": number;
          "status": string;
          "tenant_id": string;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "code": string;
          "created_at"?: string;
          "created_by"?: string | null;
          "description"?: string | null;
          "id"?: string;
          "max_adults"?: number | null;
          "max_children"?: number | null;
          "max_occupancy"?: number;
          "name": string;
          "property_id": string;
          "standard_occupancy"?: number;
          "status"?: string;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Update: {
          "code"?: string;
          "created_at"?: string;
          "created_by"?: string | null;
          "description"?: string | null;
          "id"?: string;
          "max_adults"?: number | null;
          "max_children"?: number | null;
          "max_occupancy"?: number;
          "name"?: string;
          "property_id"?: string;
          "standard_occupancy"?: number;
          "status"?: string;
          "tenant_id"?: string;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "room_types_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "room_types_tenant_id_property_id_fkey";
            columns: ["tenant_id", "property_id"];
            isOneToOne: false;
            referencedRelation: "properties";
            referencedColumns: ["tenant_id", "id"];
          },
        ];
      };
      "tasks": {
        Row: {
          "assignee_id": string | null;
          "cancelled_at": string | null;
          "completed_at": string | null;
          "created_at": string;
          "created_by": string | null;
          "description": string | null;
          "due_at": string | null;
          "id": string;
          "priority": string;
          "property_id": string;
          "reservation_id": string | null;
          "started_at": string | null;
          "status": string;
          "tenant_id": string;
          "title": string;
          "type": string;
          "unit_id": string | null;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "assignee_id"?: string | null;
          "cancelled_at"?: string | null;
          "completed_at"?: string | null;
          "created_at"?: string;
          "created_by"?: string | null;
          "description"?: string | null;
          "due_at"?: string | null;
          "id"?: string;
          "priority"?: string;
          "property_id": string;
          "reservation_id"?: string | null;
          "started_at"?: string | null;
          "status"?: string;
          "tenant_id"?: string;
          "title": string;
          "type": string;
          "unit_id"?: string | null;
          "updated_at"?: string;
        };
        Update: {
          "assignee_id"?: string | null;
          "cancelled_at"?: string | null;
          "completed_at"?: string | null;
          "created_at"?: string;
          "created_by"?: string | null;
          "description"?: string | null;
          "due_at"?: string | null;
          "id"?: string;
          "priority"?: string;
          "property_id"?: string;
          "reservation_id"?: string | null;
          "started_at"?: string | null;
          "status"?: string;
          "tenant_id"?: string;
          "title"?: string;
          "type"?: string;
          "unit_id"?: string | null;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "tasks_tenant_id_assignee_id_fkey";
            columns: ["tenant_id", "assignee_id"];
            isOneToOne: false;
            referencedRelation: "tenant_memberships";
            referencedColumns: ["tenant_id", "user_id"];
          },
          {
            foreignKeyName: "tasks_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "tasks_tenant_id_property_id_fkey";
            columns: ["tenant_id", "property_id"];
            isOneToOne: false;
            referencedRelation: "properties";
            referencedColumns: ["tenant_id", "id"];
          },
          {
            foreignKeyName: "tasks_tenant_id_property_id_reservation_id_fkey";
            columns: ["tenant_id", "property_id", "reservation_id"];
            isOneToOne: false;
            referencedRelation: "reservations";
            referencedColumns: ["tenant_id", "property_id", "id"];
          },
          {
            foreignKeyName: "tasks_tenant_id_property_id_unit_id_fkey";
            columns: ["tenant_id", "property_id", "unit_id"];
            isOneToOne: false;
            referencedRelation: "units";
            referencedColumns: ["tenant_id", "property_id", "id"];
          },
        ];
      };
      "tenant_memberships": {
        Row: {
          "created_at": string;
          "created_by": string | null;
          "role": Database["public"]["Enums"]["tenant_role"];
          "tenant_id": string;
          "updated_at": string;
          "user_id": string;
        };
        ComputedFields: never;
        Insert: {
          "created_at"?: string;
          "created_by"?: string | null;
          "role"?: Database["public"]["Enums"]["tenant_role"];
          "tenant_id": string;
          "updated_at"?: string;
          "user_id": string;
        };
        Update: {
          "created_at"?: string;
          "created_by"?: string | null;
          "role"?: Database["public"]["Enums"]["tenant_role"];
          "tenant_id"?: string;
          "updated_at"?: string;
          "user_id"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "tenant_memberships_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
        ];
      };
      "tenants": {
        Row: {
          "created_at": string;
          "created_by": string | null;
          "id": string;
          "name": string;
          "payment_page_base_url": string | null;
          "sender_email": string | null;
          "sender_name": string | null;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "created_at"?: string;
          "created_by"?: string | null;
          "id"?: string;
          "name": string;
          "payment_page_base_url"?: string | null;
          "sender_email"?: string | null;
          "sender_name"?: string | null;
          "updated_at"?: string;
        };
        Update: {
          "created_at"?: string;
          "created_by"?: string | null;
          "id"?: string;
          "name"?: string;
          "payment_page_base_url"?: string | null;
          "sender_email"?: string | null;
          "sender_name"?: string | null;
          "updated_at"?: string;
        };
        Relationships: [];
      };
      "unit_blocks": {
        Row: {
          "calendar_import_id": string | null;
          "created_at": string;
          "created_by": string | null;
          "ends_on": string;
          "id": string;
          "nights": unknown;
          "property_id": string;
          "reason": string;
          "starts_on": string;
          "tenant_id": string;
          "unit_id": string;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "calendar_import_id"?: string | null;
          "created_at"?: string;
          "created_by"?: string | null;
          "ends_on": string;
          "id"?: string;
          "nights"?: never;
          "property_id": string;
          "reason": string;
          "starts_on": string;
          "tenant_id"?: string;
          "unit_id": string;
          "updated_at"?: string;
        };
        Update: {
          "calendar_import_id"?: string | null;
          "created_at"?: string;
          "created_by"?: string | null;
          "ends_on"?: string;
          "id"?: string;
          "nights"?: never;
          "property_id"?: string;
          "reason"?: string;
          "starts_on"?: string;
          "tenant_id"?: string;
          "unit_id"?: string;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "unit_blocks_tenant_id_calendar_import_id_fkey";
            columns: ["tenant_id", "calendar_import_id"];
            isOneToOne: false;
            referencedRelation: "calendar_imports";
            referencedColumns: ["tenant_id", "id"];
          },
          {
            foreignKeyName: "unit_blocks_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "unit_blocks_tenant_id_property_id_unit_id_fkey";
            columns: ["tenant_id", "property_id", "unit_id"];
            isOneToOne: false;
            referencedRelation: "units";
            referencedColumns: ["tenant_id", "property_id", "id"];
          },
        ];
      };
      "units": {
        Row: {
          "capacity": number;
          "created_at": string;
          "created_by": string | null;
          "floor": string | null;
          "id": string;
          "name": string;
          "property_id": string;
          "room_type_id": string;
          "status": string;
          "tenant_id": string;
          "type": string;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "capacity"?: number;
          "created_at"?: string;
          "created_by"?: string | null;
          "floor"?: string | null;
          "id"?: string;
          "name": string;
          "property_id": string;
          "room_type_id": string;
          "status"?: string;
          "tenant_id"?: string;
          "type"?: string;
          "updated_at"?: string;
        };
        Update: {
          "capacity"?: number;
          "created_at"?: string;
          "created_by"?: string | null;
          "floor"?: string | null;
          "id"?: string;
          "name"?: string;
          "property_id"?: string;
          "room_type_id"?: string;
          "status"?: string;
          "tenant_id"?: string;
          "type"?: string;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "units_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "units_tenant_id_property_id_fkey";
            columns: ["tenant_id", "property_id"];
            isOneToOne: false;
            referencedRelation: "properties";
            referencedColumns: ["tenant_id", "id"];
          },
          {
            foreignKeyName: "units_tenant_id_property_id_room_type_id_fkey";
            columns: ["tenant_id", "property_id", "room_type_id"];
            isOneToOne: false;
            referencedRelation: "room_types";
            referencedColumns: ["tenant_id", "property_id", "id"];
          },
        ];
      };
      "webhook_attempts": {
        Row: {
          "attempt": number;
          "delivery_id": string;
          "duration_ms": number;
          "error": string | null;
          "id": string;
          "next_attempt_at": string | null;
          "outcome": string;
          "response_snippet": string | null;
          "started_at": string;
          "status_code": number | null;
          "tenant_id": string;
        };
        ComputedFields: never;
        Insert: {
          "attempt": number;
          "delivery_id": string;
          "duration_ms": number;
          "error"?: string | null;
          "id"?: string;
          "next_attempt_at"?: string | null;
          "outcome": string;
          "response_snippet"?: string | null;
          "started_at": string;
          "status_code"?: number | null;
          "tenant_id": string;
        };
        Update: {
          "attempt"?: number;
          "delivery_id"?: string;
          "duration_ms"?: number;
          "error"?: string | null;
          "id"?: string;
          "next_attempt_at"?: string | null;
          "outcome"?: string;
          "response_snippet"?: string | null;
          "started_at"?: string;
          "status_code"?: number | null;
          "tenant_id"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "webhook_attempts_tenant_id_delivery_id_fkey";
            columns: ["tenant_id", "delivery_id"];
            isOneToOne: false;
            referencedRelation: "webhook_deliveries";
            referencedColumns: ["tenant_id", "id"];
          },
        ];
      };
      "webhook_deliveries": {
        Row: {
          "attempt_started_at": string | null;
          "attempts": number;
          "created_at": string;
          "ended_at": string | null;
          "event_id": string;
          "id": string;
          "last_attempt_at": string | null;
          "last_status_code": number | null;
          "next_attempt_at": string | null;
          "order_key": string | null;
          "reservation_id": string | null;
          "sequence": number;
          "status": string;
          "subscription_id": string;
          "tenant_id": string;
        };
        ComputedFields: never;
        Insert: {
          "attempt_started_at"?: string | null;
          "attempts"?: number;
          "created_at"?: string;
          "ended_at"?: string | null;
          "event_id": string;
          "id"?: string;
          "last_attempt_at"?: string | null;
          "last_status_code"?: number | null;
          "next_attempt_at"?: string | null;
          "order_key"?: string | null;
          "reservation_id"?: string | null;
          "sequence"?: never;
          "status"?: string;
          "subscription_id": string;
          "tenant_id": string;
        };
        Update: {
          "attempt_started_at"?: string | null;
          "attempts"?: number;
          "created_at"?: string;
          "ended_at"?: string | null;
          "event_id"?: string;
          "id"?: string;
          "last_attempt_at"?: string | null;
          "last_status_code"?: number | null;
          "next_attempt_at"?: string | null;
          "order_key"?: string | null;
          "reservation_id"?: string | null;
          "sequence"?: never;
          "status"?: string;
          "subscription_id"?: string;
          "tenant_id"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "webhook_deliveries_tenant_id_event_id_fkey";
            columns: ["tenant_id", "event_id"];
            isOneToOne: false;
            referencedRelation: "webhook_events";
            referencedColumns: ["tenant_id", "id"];
          },
          {
            foreignKeyName: "webhook_deliveries_tenant_id_subscription_id_fkey";
            columns: ["tenant_id", "subscription_id"];
            isOneToOne: false;
            referencedRelation: "webhook_subscriptions";
            referencedColumns: ["tenant_id", "id"];
          },
        ];
      };
      "webhook_events": {
        Row: {
          "data": NonNullable<Json>;
          "id": string;
          "occurred_at": string;
          "property_ids": (string)[];
          "reservation_id": string | null;
          "tenant_id": string;
          "type": string;
        };
        ComputedFields: never;
        Insert: {
          "data": NonNullable<Json>;
          "id"?: string;
          "occurred_at"?: string;
          "property_ids"?: (string)[];
          "reservation_id"?: string | null;
          "tenant_id": string;
          "type": string;
        };
        Update: {
          "data"?: NonNullable<Json>;
          "id"?: string;
          "occurred_at"?: string;
          "property_ids"?: (string)[];
          "reservation_id"?: string | null;
          "tenant_id"?: string;
          "type"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "webhook_events_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
        ];
      };
      "webhook_subscriptions": {
        Row: {
          "created_at": string;
          "created_by": string | null;
          "description": string | null;
          "disabled_at": string | null;
          "disabled_reason": string | null;
          "enabled": boolean;
          "event_types": (string)[];
          "failing_since": string | null;
          "id": string;
          "previous_secret": string | null;
          "previous_secret_expires_at": string | null;
          "property_ids": (string)[];
          "secret": string;
          "tenant_id": string;
          "updated_at": string;
          "url": string;
        };
        ComputedFields: never;
        Insert: {
          "created_at"?: string;
          "created_by"?: string | null;
          "description"?: string | null;
          "disabled_at"?: string | null;
          "disabled_reason"?: string | null;
          "enabled"?: boolean;
          "event_types"?: (string)[];
          "failing_since"?: string | null;
          "id"?: string;
          "previous_secret"?: string | null;
          "previous_secret_expires_at"?: string | null;
          "property_ids"?: (string)[];
          "secret"?: string;
          "tenant_id"?: string;
          "updated_at"?: string;
          "url": string;
        };
        Update: {
          "created_at"?: string;
          "created_by"?: string | null;
          "description"?: string | null;
          "disabled_at"?: string | null;
          "disabled_reason"?: string | null;
          "enabled"?: boolean;
          "event_types"?: (string)[];
          "failing_since"?: string | null;
          "id"?: string;
          "previous_secret"?: string | null;
          "previous_secret_expires_at"?: string | null;
          "property_ids"?: (string)[];
          "secret"?: string;
          "tenant_id"?: string;
          "updated_at"?: string;
          "url"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "webhook_subscriptions_tenant_id_fkey";
            columns: ["tenant_id"];
            isOneToOne: false;
            referencedRelation: "tenants";
            referencedColumns: ["id"];
          },
        ];
      };
    };
    Views: {
      [_ in never]: never;
    };
    Functions: {
      "add_tenant_member": {
        Args: {
          "email": string;
          "role"?: Database["public"]["Enums"]["tenant_role"];
        };
        Returns: {
          "created_at": string;
          "created_by": string | null;
          "role": Database["public"]["Enums"]["tenant_role"];
          "tenant_id": string;
          "updated_at": string;
          "user_id": string;
        };
        SetofOptions: {
          from: "*";
          to: "tenant_memberships";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "change_tenant_member_role": {
        Args: {
          "role": Database["public"]["Enums"]["tenant_role"];
          "user_id": string;
        };
        Returns: {
          "created_at": string;
          "created_by": string | null;
          "role": Database["public"]["Enums"]["tenant_role"];
          "tenant_id": string;
          "updated_at": string;
          "user_id": string;
        };
        SetofOptions: {
          from: "*";
          to: "tenant_memberships";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "create_tenant": {
        Args: { "name": string };
        Returns: {
          "created_at": string;
          "created_by": string | null;
          "id": string;
          "name": string;
          "payment_page_base_url": string | null;
          "sender_email": string | null;
          "sender_name": string | null;
          "updated_at": string;
        };
        SetofOptions: {
          from: "*";
          to: "tenants";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "list_my_tenants": {
        Args: Record<PropertyKey, never>;
        Returns: {
          "name": string;
          "role": Database["public"]["Enums"]["tenant_role"];
          "tenant_id": string;
        }[];
      };
      "list_tenant_members": {
        Args: Record<PropertyKey, never>;
        Returns: {
          "created_at": string;
          "email": string;
          "full_name": string;
          "role": Database["public"]["Enums"]["tenant_role"];
          "updated_at": string;
          "user_id": string;
        }[];
      };
      "remove_tenant_member": {
        Args: { "user_id": string };
        Returns: undefined;
      };
    };
    Enums: {
      "tenant_role": "owner" | "admin" | "staff";
    };
    CompositeTypes: {
      [_ in never]: never;
    };
  };
};

type DatabaseWithoutInternals = Omit<Database, "__InternalSupabase">;

type DefaultSchema =
  DatabaseWithoutInternals[Extract<keyof Database, "public">];

export type Tables<
  DefaultSchemaTableNameOrOptions extends
    | keyof (DefaultSchema["Tables"] & DefaultSchema["Views"])
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals;
  } ? keyof (
      & DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]][
        "Tables"
      ]
      & DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]][
        "Views"
      ]
    )
    : never = never,
> = DefaultSchemaTableNameOrOptions extends
  { schema: keyof DatabaseWithoutInternals } ? (
    & DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]][
      "Tables"
    ]
    & DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]][
      "Views"
    ]
  )[TableName] extends {
    Row: infer R;
  } ? R
  : never
  : DefaultSchemaTableNameOrOptions extends
    keyof (DefaultSchema["Tables"] & DefaultSchema["Views"])
    ? (DefaultSchema["Tables"] & DefaultSchema["Views"])[
      DefaultSchemaTableNameOrOptions
    ] extends {
      Row: infer R;
    } ? R
    : never
  : never;

export type TablesInsert<
  DefaultSchemaTableNameOrOptions extends
    | keyof DefaultSchema["Tables"]
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals;
  }
    ? keyof DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]][
      "Tables"
    ]
    : never = never,
> = DefaultSchemaTableNameOrOptions extends
  { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]][
    "Tables"
  ][TableName] extends {
    Insert: infer I;
  } ? I
  : never
  : DefaultSchemaTableNameOrOptions extends keyof DefaultSchema["Tables"]
    ? DefaultSchema["Tables"][DefaultSchemaTableNameOrOptions] extends {
      Insert: infer I;
    } ? I
    : never
  : never;

export type TablesUpdate<
  DefaultSchemaTableNameOrOptions extends
    | keyof DefaultSchema["Tables"]
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals;
  }
    ? keyof DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]][
      "Tables"
    ]
    : never = never,
> = DefaultSchemaTableNameOrOptions extends
  { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]][
    "Tables"
  ][TableName] extends {
    Update: infer U;
  } ? U
  : never
  : DefaultSchemaTableNameOrOptions extends keyof DefaultSchema["Tables"]
    ? DefaultSchema["Tables"][DefaultSchemaTableNameOrOptions] extends {
      Update: infer U;
    } ? U
    : never
  : never;

export type Enums<
  DefaultSchemaEnumNameOrOptions extends
    | keyof DefaultSchema["Enums"]
    | { schema: keyof DatabaseWithoutInternals },
  EnumName extends DefaultSchemaEnumNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals;
  }
    ? keyof DatabaseWithoutInternals[DefaultSchemaEnumNameOrOptions["schema"]][
      "Enums"
    ]
    : never = never,
> = DefaultSchemaEnumNameOrOptions extends
  { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[DefaultSchemaEnumNameOrOptions["schema"]]["Enums"][
    EnumName
  ]
  : DefaultSchemaEnumNameOrOptions extends keyof DefaultSchema["Enums"]
    ? DefaultSchema["Enums"][DefaultSchemaEnumNameOrOptions]
  : never;

export type CompositeTypes<
  PublicCompositeTypeNameOrOptions extends
    | keyof DefaultSchema["CompositeTypes"]
    | { schema: keyof DatabaseWithoutInternals },
  CompositeTypeName extends PublicCompositeTypeNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals;
  }
    ? keyof DatabaseWithoutInternals[
      PublicCompositeTypeNameOrOptions["schema"]
    ]["CompositeTypes"]
    : never = never,
> = PublicCompositeTypeNameOrOptions extends
  { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[PublicCompositeTypeNameOrOptions["schema"]][
    "CompositeTypes"
  ][CompositeTypeName]
  : PublicCompositeTypeNameOrOptions extends
    keyof DefaultSchema["CompositeTypes"]
    ? DefaultSchema["CompositeTypes"][PublicCompositeTypeNameOrOptions]
  : never;

export const Constants = {
  "public": {
    Enums: {
      "tenant_role": ["owner", "admin", "staff"],
    },
  },
} as const;
