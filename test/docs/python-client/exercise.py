"""Calls the API through a client openapi-python-client generated from the served document.

Run by test/docs/generated-client.test.ts with the generated package's folder on
sys.path. Prints one JSON object: what each call answered, as the generated client
parsed it, for the test to judge.
"""

import importlib
import json
import os
import sys
import uuid

sys.path.insert(0, os.environ["CLIENT_PARENT"])
package = os.environ["CLIENT_PACKAGE"]
client_module = importlib.import_module(f"{package}.client")
create_property = importlib.import_module(f"{package}.api.properties.create_property")
get_property = importlib.import_module(f"{package}.api.properties.get_property")
models = importlib.import_module(f"{package}.models")

client = client_module.AuthenticatedClient(base_url=os.environ["API_BASE"], token=os.environ["TOKEN"])
tenant = os.environ["TENANT_ID"]
name = f"Generated client house {uuid.uuid4().hex[:8]}"
body = models.PropertyCreate.from_dict({"name": name, "timezone": "Europe/Lisbon", "currency": "EUR"})


def kind(parsed):
    return type(parsed).__name__


created = create_property.sync_detailed(client=client, body=body, x_tenant_id=tenant)
read = get_property.sync_detailed(id=created.parsed.id, client=client, x_tenant_id=tenant)
again = create_property.sync_detailed(client=client, body=body, x_tenant_id=tenant)
whole = create_property.sync_detailed(
    client=client,
    body=models.PropertyCreate.from_dict({"name": f"{name} annex", "timezone": "Europe/Lisbon", "currency": "EUR"}),
    x_tenant_id=tenant,
    prefer="return=representation",
)
unknown = get_property.sync_detailed(id=uuid.uuid4(), client=client, x_tenant_id=tenant)

print(json.dumps({
    "created": {
        "status": int(created.status_code),
        "kind": kind(created.parsed),
        "id": str(created.parsed.id),
        "location": created.headers.get("location"),
    },
    "read": {"status": int(read.status_code), "kind": kind(read.parsed), "name": read.parsed.name},
    "again": {"status": int(again.status_code), "kind": kind(again.parsed), "type": again.parsed.type_},
    "whole": {"status": int(whole.status_code), "kind": kind(whole.parsed), "name": whole.parsed.name},
    "unknown": {"status": int(unknown.status_code), "kind": kind(unknown.parsed), "type": unknown.parsed.type_},
}))
