"""The quick-start flow of docs/README.md, run with the Python client openapi-python-client
generated from the OpenAPI document (.ci/clients.sh): me, products, quote, order (with a
replay), cancel, webhooks. Each step checks the status and a figure of the answer, through the
generated models. Usage: quickstart.py http://127.0.0.1:PORT (the sandbox)."""

import sys

from commerce_api_client import AuthenticatedClient
from commerce_api_client.api.account import me_show
from commerce_api_client.api.catalogue import products_list, products_show
from commerce_api_client.api.orders import orders_cancel, orders_create, orders_show
from commerce_api_client.api.shipping import shipping_quote
from commerce_api_client.api.wallet import wallet_show
from commerce_api_client.api.webhooks import (
    webhooks_create,
    webhooks_delete,
    webhooks_deliveries,
    webhooks_list,
    webhooks_ping,
    webhooks_rotate_secret,
    webhooks_update,
)
from commerce_api_client.models import (
    CancelRequest,
    OrderRequest,
    QuoteRequest,
    WebhookCreate,
    WebhookUpdate,
)


def expect(response, status, what):
    if response.status_code != status:
        raise SystemExit(
            f"{what}: {response.status_code} instead of {status}: {response.content!r}"
        )
    return response.parsed


def main(base):
    client = AuthenticatedClient(base_url=base, token="sk_demo_marketer")

    me = expect(me_show.sync_detailed(client=client, request_id="py-me"), 200, "GET /me")
    assert "orders:write" in me.data.token.abilities, me.data.token.abilities

    page = expect(products_list.sync_detailed(client=client, per_page=2), 200, "GET /products")
    assert len(page.data) == 2 and page.meta.total >= 2, page.meta
    variant = page.data[0].variants[0]
    product = expect(
        products_show.sync_detailed(page.data[0].id, client=client), 200, "GET /products/{id}"
    )
    assert product.data.id == page.data[0].id

    line = {"variant_id": variant.id, "quantity": 2, "profit": "40.00"}
    quote = expect(
        shipping_quote.sync_detailed(
            client=client,
            body=QuoteRequest.from_dict(
                {"shipping_option_id": 1, "governorate_id": 1, "lines": [line]}
            ),
        ),
        200,
        "POST /shipping/quote",
    )

    order = OrderRequest.from_dict(
        {
            "external_reference": "PY-QUICKSTART-1",
            "full_name": "سارة حسن",
            "phone": "0111 222-3334",
            "address": "12 شارع النصر، مدينة نصر",
            "governorate_id": 1,
            "shipping_option_id": 1,
            "lines": [line],
        }
    )
    first = orders_create.sync_detailed(
        client=client, body=order, idempotency_key="py-order-1", request_id="py-order"
    )
    created = expect(first, 201, "POST /orders")
    assert first.headers["request-id"] == "py-order"
    assert created.data.totals.customer_total == quote.data.customer_total, (
        created.data.totals.customer_total,
        quote.data.customer_total,
    )
    order_id = created.data.id
    replay = orders_create.sync_detailed(client=client, body=order, idempotency_key="py-order-1")
    assert expect(replay, 201, "the replay").data.id == order_id
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.headers["request-id"].startswith("req_")

    shown = expect(orders_show.sync_detailed(order_id, client=client), 200, "GET /orders/{id}")
    assert shown.data.status.key == "order_pending", shown.data.status.key

    cancelled = expect(
        orders_cancel.sync_detailed(
            order_id, client=client, body=CancelRequest.from_dict({"reason_note": "تجربة"})
        ),
        200,
        "POST /orders/{id}/cancel",
    )
    assert cancelled.data.family == "cancelled", cancelled.data.family
    again = orders_cancel.sync_detailed(order_id, client=client, request_id="py-again")
    refused = expect(again, 409, "a second cancel")
    error = refused.error.to_dict()
    assert error["reason"] == "not_cancellable" and error["request_id"] == "py-again", error

    wallet = expect(wallet_show.sync_detailed(client=client), 200, "GET /wallet")
    assert wallet.to_dict()["data"]["currency"] == "EGP"

    hook = expect(
        webhooks_create.sync_detailed(
            client=client,
            body=WebhookCreate.from_dict(
                {"url": "http://127.0.0.1:4000/webhooks", "events": ["order.created"]}
            ),
        ),
        201,
        "POST /webhooks",
    )
    hook_id = hook.data.id
    assert hook.data.secret.startswith("whsec_")
    listed = expect(webhooks_list.sync_detailed(client=client), 200, "GET /webhooks")
    assert hook_id in [w.id for w in listed.data]
    ping = expect(webhooks_ping.sync_detailed(hook_id, client=client), 202, "ping")
    assert ping.data.event_type == "ping"
    deliveries = expect(
        webhooks_deliveries.sync_detailed(hook_id, client=client), 200, "deliveries"
    )
    assert ping.data.id in [d.id for d in deliveries.data]
    rotated = expect(
        webhooks_rotate_secret.sync_detailed(hook_id, client=client), 200, "rotate_secret"
    )
    assert rotated.data.secret != hook.data.secret
    disabled = expect(
        webhooks_update.sync_detailed(
            hook_id, client=client, body=WebhookUpdate.from_dict({"enabled": False})
        ),
        200,
        "PATCH /webhooks/{id}",
    )
    assert disabled.data.enabled is False
    gone = webhooks_delete.sync_detailed(hook_id, client=client)
    assert gone.status_code == 204, gone.status_code

    print(
        f"Python: the quick-start flow passed (order {order_id}, "
        f"customer total {quote.data.customer_total}, webhook {hook_id})"
    )


if __name__ == "__main__":
    main(sys.argv[1])
