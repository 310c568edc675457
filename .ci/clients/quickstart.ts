// The quick-start flow of docs/README.md with the typed TypeScript client (client.ts, over the
// types openapi-typescript generated from the OpenAPI document): me, products, the change feed
// followed to its end before and after the order, quote, order (with a replay), cancel, wallet,
// webhooks (quickstart.py runs the flow without the feed with the Python client). Each step
// checks the status and a figure of the answer; the first that differs ends the run with
// exit code 1. Compiled to JavaScript by .ci/clients.sh and run by node:
// `node quickstart.js http://127.0.0.1:PORT` (the sandbox). It uses `sk_demo_marketer_b`, so
// that its requests count in another rate window than the Python run's.

import { Client, followCatalog, type ErrorBody, type Reply } from "./client";

declare const process: { argv: string[]; exitCode?: number };

/** The body of an answer with `status`; else the step fails. */
function expect<A>(reply: Reply<A>, status: number, step: string): A {
  if (!reply.ok || reply.status !== status) {
    throw new Error(`${step}: ${reply.status} instead of ${status}: ${JSON.stringify(reply.body)}`);
  }
  return reply.body;
}

/** The error body of a refusal with `status`; else the step fails. */
function refused<A>(reply: Reply<A>, status: number, step: string): ErrorBody {
  if (reply.ok || reply.status !== status) {
    throw new Error(`${step}: ${reply.status} instead of ${status}: ${JSON.stringify(reply.body)}`);
  }
  return reply.body;
}

function check(condition: boolean, step: string, seen: unknown): void {
  if (!condition) throw new Error(`${step}: unexpected ${JSON.stringify(seen)}`);
}

async function main(base: string): Promise<void> {
  const client = new Client(base, "sk_demo_marketer_b");

  const meReply = await client.send("/api/v1/me", "get", { header: { "Request-Id": "ts-me" } }, undefined);
  const me = expect(meReply, 200, "GET /me");
  check(me.data.token.abilities.includes("orders:write"), "GET /me abilities", me.data.token);
  check(meReply.headers.get("request-id") === "ts-me", "GET /me Request-Id", meReply.headers.get("request-id"));

  const page = expect(
    await client.send("/api/v1/products", "get", { query: { per_page: 2 } }, undefined),
    200,
    "GET /products",
  );
  check(page.data.length === 2 && page.meta.total >= 2, "GET /products page", page.meta);
  const variant = page.data[0].variants[0];
  const product = expect(
    await client.send("/api/v1/products/{id}", "get", { path: { id: page.data[0].id } }, undefined),
    200,
    "GET /products/{id}",
  );
  check(product.data.id === page.data[0].id, "GET /products/{id} id", product.data.id);

  const line = { variant_id: variant.id, quantity: 2, profit: "40.00" };
  const quote = expect(
    await client.send("/api/v1/shipping/quote", "post", {}, {
      shipping_option_id: 1,
      governorate_id: 1,
      lines: [line],
    }),
    200,
    "POST /shipping/quote",
  );

  const order = {
    external_reference: "TS-QUICKSTART-1",
    full_name: "سارة حسن",
    phone: "0111 222-3334",
    address: "12 شارع النصر، مدينة نصر",
    governorate_id: 1,
    shipping_option_id: 1,
    lines: [line],
  };
  // The change feed followed to its end, before and after the order: the order's pieces move
  // the product's stock, so the next read names it as updated.
  const synced = await followCatalog(client);
  const first = await client.send(
    "/api/v1/orders",
    "post",
    { header: { "Idempotency-Key": "ts-order-1", "Request-Id": "ts-order" } },
    order,
  );
  const created = expect(first, 201, "POST /orders");
  check(first.headers.get("request-id") === "ts-order", "POST /orders Request-Id", first.headers.get("request-id"));
  check(
    created.data.totals.customer_total === quote.data.customer_total,
    "the order's total is the quote's",
    [created.data.totals.customer_total, quote.data.customer_total],
  );
  const orderId = created.data.id;
  check(
    first.headers.get("location")?.endsWith(`/api/v1/orders/${orderId}`) === true,
    "POST /orders Location",
    first.headers.get("location"),
  );
  const followed = await followCatalog(client, synced.cursor);
  check(
    followed.changes.some((c) => c.product_id === page.data[0].id && c.kind === "updated"),
    "the change feed names the ordered product",
    followed.changes,
  );
  check(followed.cursor !== synced.cursor, "the feed's cursor moved on", followed.cursor);
  const replay = await client.send("/api/v1/orders", "post", { header: { "Idempotency-Key": "ts-order-1" } }, order);
  check(expect(replay, 201, "the replay").data.id === orderId, "the replay's order", orderId);
  check(replay.headers.get("idempotent-replayed") === "true", "Idempotent-Replayed", replay.headers.get("idempotent-replayed"));
  check(replay.headers.get("request-id")?.startsWith("req_") === true, "the replay's Request-Id", replay.headers.get("request-id"));

  const shown = expect(
    await client.send("/api/v1/orders/{id}", "get", { path: { id: orderId } }, undefined),
    200,
    "GET /orders/{id}",
  );
  check(shown.data.status.key === "order_pending", "GET /orders/{id} status", shown.data.status);

  const cancelled = expect(
    await client.send("/api/v1/orders/{id}/cancel", "post", { path: { id: orderId } }, { reason_note: "تجربة" }),
    200,
    "POST /orders/{id}/cancel",
  );
  check(cancelled.data.family === "cancelled", "the cancelled order's family", cancelled.data.family);
  const again = refused(
    await client.send(
      "/api/v1/orders/{id}/cancel",
      "post",
      { path: { id: orderId }, header: { "Request-Id": "ts-again" } },
      {},
    ),
    409,
    "a second cancel",
  );
  check(
    again.error.reason === "not_cancellable" && again.error.request_id === "ts-again",
    "the second cancel's error",
    again.error,
  );

  const wallet = expect(await client.send("/api/v1/wallet", "get", {}, undefined), 200, "GET /wallet");
  check(wallet.data.currency === "EGP", "GET /wallet currency", wallet.data.currency);

  const hook = expect(
    await client.send("/api/v1/webhooks", "post", {}, {
      url: "http://127.0.0.1:4000/webhooks",
      events: ["order.created"],
    }),
    201,
    "POST /webhooks",
  );
  const hookId = hook.data.id;
  check(hook.data.secret?.startsWith("whsec_") === true, "the webhook's secret", hook.data.secret);
  const listed = expect(await client.send("/api/v1/webhooks", "get", {}, undefined), 200, "GET /webhooks");
  check(listed.data.some((w) => w.id === hookId), "GET /webhooks lists it", listed.data);
  const ping = expect(
    await client.send("/api/v1/webhooks/{id}/ping", "post", { path: { id: hookId } }, undefined),
    202,
    "POST /webhooks/{id}/ping",
  );
  check(ping.data.event_type === "ping", "the ping's event type", ping.data.event_type);
  const deliveries = expect(
    await client.send("/api/v1/webhooks/{id}/deliveries", "get", { path: { id: hookId } }, undefined),
    200,
    "GET /webhooks/{id}/deliveries",
  );
  check(deliveries.data.some((d) => d.id === ping.data.id), "the ping is a delivery", deliveries.data);
  const rotated = expect(
    await client.send("/api/v1/webhooks/{id}/rotate_secret", "post", { path: { id: hookId } }, undefined),
    200,
    "POST /webhooks/{id}/rotate_secret",
  );
  check(rotated.data.secret !== hook.data.secret, "a new secret", rotated.data.secret);
  const disabled = expect(
    await client.send("/api/v1/webhooks/{id}", "patch", { path: { id: hookId } }, { enabled: false }),
    200,
    "PATCH /webhooks/{id}",
  );
  check(disabled.data.enabled === false, "the webhook is disabled", disabled.data.enabled);
  const gone = await client.send("/api/v1/webhooks/{id}", "delete", { path: { id: hookId } }, undefined);
  expect(gone, 204, "DELETE /webhooks/{id}");
  refused(
    await client.send("/api/v1/webhooks/{id}", "get", { path: { id: hookId } }, undefined),
    404,
    "GET /webhooks/{id} after its deletion",
  );

  console.log(
    `TypeScript: the quick-start flow passed (order ${orderId}, customer total ` +
      `${quote.data.customer_total}, webhook ${hookId})`,
  );
}

main(process.argv[2]).catch((error: unknown) => {
  console.error(`TypeScript quick start: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
