// A small typed client over the types openapi-typescript generates from the OpenAPI document
// (`./schema`, written by .ci/clients.sh). `tsc --strict` checks it: every operation of the
// document must be called below (`calls` is typed by the document's paths, so a new operation
// without a call, or a call the document does not describe, is a type error), with the
// parameters and body the document declares, reading the answer it declares. quickstart.ts
// runs the quick-start flow with it against the sandbox (compiled to JavaScript, run by node).

import type { components, paths } from "./schema";

type Method = "get" | "post" | "patch" | "put" | "delete";
/** The methods the document declares on `P`. */
type MethodsOf<P extends keyof paths> = {
  [M in Method]: paths[P][M] extends undefined ? never : M;
}[Method];
type Operation<P extends keyof paths, M extends MethodsOf<P>> = NonNullable<paths[P][M]>;
type Parameters<O> = O extends { parameters: infer Q } ? Q : never;
type RequestBody<O> = O extends {
  requestBody?: { content: { "application/json": infer B } };
}
  ? B
  : undefined;
/** The JSON body of the success answer (200, 201 or 202), `undefined` for a 204. */
type Answer<O> = O extends { responses: infer R }
  ? R extends { 200: { content: { "application/json": infer A } } }
    ? A
    : R extends { 201: { content: { "application/json": infer A } } }
      ? A
      : R extends { 202: { content: { "application/json": infer A } } }
        ? A
        : undefined
  : never;
export type ErrorBody = components["schemas"]["Error"];

/** Thrown for a 4xx or 5xx: the error body, with its request id. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(`${status} ${body.error.code} (${body.error.request_id})`);
  }
}

/** An answer with its status and headers: the success body, or the error body of a 4xx/5xx. */
export type Reply<A> =
  | { ok: true; status: number; headers: Headers; body: A }
  | { ok: false; status: number; headers: Headers; body: ErrorBody };

export class Client {
  constructor(
    private readonly base: string,
    private readonly key: string,
  ) {}

  /** The success answer's body; an `ApiError` for any other answer. */
  async call<P extends keyof paths, M extends MethodsOf<P>>(
    path: P,
    method: M,
    parameters: Parameters<Operation<P, M>>,
    body: RequestBody<Operation<P, M>>,
  ): Promise<Answer<Operation<P, M>>> {
    const reply = await this.send(path, method, parameters, body);
    if (!reply.ok) throw new ApiError(reply.status, reply.body);
    return reply.body;
  }

  /** The answer, whatever its status, with its headers. */
  async send<P extends keyof paths, M extends MethodsOf<P>>(
    path: P,
    method: M,
    parameters: Parameters<Operation<P, M>>,
    body: RequestBody<Operation<P, M>>,
  ): Promise<Reply<Answer<Operation<P, M>>>> {
    const params = parameters as {
      path?: Record<string, number>;
      query?: Record<string, string | number | undefined>;
      header?: Record<string, string | undefined>;
    };
    let url = String(path);
    for (const [name, value] of Object.entries(params.path ?? {})) {
      url = url.replace(`{${name}}`, String(value));
    }
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(params.query ?? {})) {
      if (value !== undefined) query.set(name, String(value));
    }
    const headers: Record<string, string> = {
      Accept: "application/json",
      Authorization: `Bearer ${this.key}`,
    };
    for (const [name, value] of Object.entries(params.header ?? {})) {
      if (value !== undefined) headers[name] = value;
    }
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(`${this.base}${url}${query.size ? `?${query}` : ""}`, {
      method: method.toUpperCase(),
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const status = response.status;
    if (!response.ok) {
      const error = (await response.json()) as ErrorBody;
      return { ok: false, status, headers: response.headers, body: error };
    }
    const answer = (status === 204 ? undefined : await response.json()) as Answer<Operation<P, M>>;
    return { ok: true, status, headers: response.headers, body: answer };
  }
}

/** One entry of the catalogue change feed. */
export type CatalogChange = components["schemas"]["CatalogChange"];

/**
 * Follows the catalogue change feed from `after` (its oldest change when left out) to its end:
 * every change read, and the cursor to read from next time. Store the products the changes
 * name first and the cursor after them: a crash in between reads those changes again instead
 * of skipping them.
 */
export async function followCatalog(
  client: Client,
  after?: string,
): Promise<{ changes: CatalogChange[]; cursor: string }> {
  const changes: CatalogChange[] = [];
  let cursor = after;
  for (;;) {
    const page = await client.call(
      "/api/v1/catalog/changes",
      "get",
      { query: { after: cursor, limit: 100 } },
      undefined,
    );
    changes.push(...page.data);
    cursor = page.meta.next_cursor;
    if (!page.meta.has_more) return { changes, cursor };
  }
}

/** One call of every operation, in the order of the quick start. */
type Calls = {
  [P in keyof paths]: { [M in MethodsOf<P>]: (client: Client) => Promise<unknown> };
};

const order: components["schemas"]["OrderRequest"] = {
  external_reference: "TS-1",
  full_name: "سارة حسن",
  phone: "0111 222 3334",
  address: "12 شارع النصر",
  governorate_id: 1,
  shipping_option_id: 1,
  lines: [{ variant_id: 1, quantity: 1, profit: "40.00" }],
};

export const calls: Calls = {
  "/api/v1/openapi.json": { get: (c) => c.call("/api/v1/openapi.json", "get", {}, undefined) },
  "/api/v1/me": {
    get: async (c) => {
      const me = await c.call("/api/v1/me", "get", { header: { "Request-Id": "ts-me" } }, undefined);
      const abilities: string[] = me.data.token.abilities;
      return abilities;
    },
  },
  "/api/v1/categories": {
    get: (c) => c.call("/api/v1/categories", "get", { query: { per_page: 10 } }, undefined),
  },
  "/api/v1/products": {
    get: async (c) => {
      const page = await c.call("/api/v1/products", "get", { query: { per_page: 2 } }, undefined);
      const last: number = page.meta.last_page;
      const price: string = page.data[0].variants[0].price;
      return [last, price];
    },
  },
  "/api/v1/products/{id}": {
    get: (c) => c.call("/api/v1/products/{id}", "get", { path: { id: 1 } }, undefined),
  },
  "/api/v1/catalog/changes": {
    get: async (c) => {
      const changes = await c.call("/api/v1/catalog/changes", "get", { query: { limit: 10 } }, undefined);
      const kind: "created" | "updated" | "removed" | undefined = changes.data[0]?.kind;
      const next: string = changes.meta.next_cursor;
      return [kind, next];
    },
  },
  "/api/v1/products/removed": {
    get: async (c) => {
      const removed = await c.call(
        "/api/v1/products/removed",
        "get",
        { query: { since: "2026-01-01T00:00:00Z" } },
        undefined,
      );
      const at: string | undefined = removed.data[0]?.removed_at;
      return at;
    },
  },
  "/api/v1/sandbox/orders/{id}/status": {
    post: async (c) => {
      const moved = await c.call(
        "/api/v1/sandbox/orders/{id}/status",
        "post",
        { path: { id: 5 } },
        { status: "order_confirmed" },
      );
      const key: string = moved.data.status.key;
      return key;
    },
  },
  "/api/v1/sandbox/clock": {
    get: (c) => c.call("/api/v1/sandbox/clock", "get", {}, undefined),
    post: async (c) => {
      const clock = await c.call("/api/v1/sandbox/clock", "post", {}, { advance_seconds: 60 });
      const now: string = clock.data.now;
      return now;
    },
  },
  "/api/v1/shipping/options": {
    get: (c) => c.call("/api/v1/shipping/options", "get", {}, undefined),
  },
  "/api/v1/shipping/quote": {
    post: async (c) => {
      const quote = await c.call("/api/v1/shipping/quote", "post", {}, {
        shipping_option_id: 1,
        governorate_id: 1,
        lines: [{ variant_id: 1, quantity: 1, profit: "40.00" }],
      });
      const total: string = quote.data.customer_total;
      return total;
    },
  },
  "/api/v1/orders": {
    get: (c) => c.call("/api/v1/orders", "get", { query: { family: "pending" } }, undefined),
    post: async (c) => {
      const created = await c.call(
        "/api/v1/orders",
        "post",
        { header: { "Idempotency-Key": "ts-order-1" } },
        order,
      );
      const id: number = created.data.id;
      return id;
    },
  },
  "/api/v1/orders/{id}": {
    get: (c) => c.call("/api/v1/orders/{id}", "get", { path: { id: 5 } }, undefined),
  },
  "/api/v1/orders/{id}/cancel": {
    post: (c) =>
      c.call("/api/v1/orders/{id}/cancel", "post", { path: { id: 5 } }, { reason_note: "تجربة" }),
  },
  "/api/v1/wallet": { get: (c) => c.call("/api/v1/wallet", "get", {}, undefined) },
  "/api/v1/webhooks": {
    get: (c) => c.call("/api/v1/webhooks", "get", {}, undefined),
    post: async (c) => {
      const hook = await c.call("/api/v1/webhooks", "post", {}, {
        url: "http://127.0.0.1:4000/webhooks",
        events: ["order.created"],
      });
      return hook.data.secret;
    },
  },
  "/api/v1/webhooks/{id}": {
    get: (c) => c.call("/api/v1/webhooks/{id}", "get", { path: { id: 1 } }, undefined),
    patch: (c) =>
      c.call("/api/v1/webhooks/{id}", "patch", { path: { id: 1 } }, { enabled: false }),
    delete: (c) => c.call("/api/v1/webhooks/{id}", "delete", { path: { id: 1 } }, undefined),
  },
  "/api/v1/webhooks/{id}/rotate_secret": {
    post: (c) =>
      c.call("/api/v1/webhooks/{id}/rotate_secret", "post", { path: { id: 1 } }, undefined),
  },
  "/api/v1/webhooks/{id}/ping": {
    post: (c) => c.call("/api/v1/webhooks/{id}/ping", "post", { path: { id: 1 } }, undefined),
  },
  "/api/v1/webhooks/{id}/deliveries": {
    get: (c) =>
      c.call(
        "/api/v1/webhooks/{id}/deliveries",
        "get",
        { path: { id: 1 }, query: { status: "failed" } },
        undefined,
      ),
  },
  "/api/v1/supply/variants": {
    get: async (c) => {
      const page = await c.call("/api/v1/supply/variants", "get", { query: { per_page: 10 } }, undefined);
      const pending: number | null | undefined = page.data[0]?.pending_quote_id;
      return pending;
    },
  },
  "/api/v1/quotes": {
    get: (c) => c.call("/api/v1/quotes", "get", { query: { status: "pending" } }, undefined),
    post: async (c) => {
      const quote = await c.call(
        "/api/v1/quotes",
        "post",
        { header: { "Idempotency-Key": "ts-quote-1" } },
        { variant_id: 1, unit_price: "150.00", quantity: 10, note: "دفعة جديدة" },
      );
      const status: string = quote.data.status.key;
      return status;
    },
  },
  "/api/v1/quotes/{id}": {
    get: (c) => c.call("/api/v1/quotes/{id}", "get", { path: { id: 1 } }, undefined),
  },
  "/api/v1/quotes/{id}/withdraw": {
    post: (c) => c.call("/api/v1/quotes/{id}/withdraw", "post", { path: { id: 1 } }, undefined),
  },
  "/api/v1/sandbox/quotes/{id}/decision": {
    post: (c) =>
      c.call(
        "/api/v1/sandbox/quotes/{id}/decision",
        "post",
        { path: { id: 1 } },
        { decision: "accept", note: "تمام" },
      ),
  },
  "/api/v1/statement": {
    get: async (c) => {
      const page = await c.call("/api/v1/statement", "get", { query: { from: "2026-01-01" } }, undefined);
      const balance: string | undefined = page.data[0]?.balance;
      return balance;
    },
  },
  "/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver": {
    post: (c) =>
      c.call(
        "/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver",
        "post",
        { path: { id: 1, delivery_id: 1 } },
        undefined,
      ),
  },
};
