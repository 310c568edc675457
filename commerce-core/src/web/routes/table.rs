//! The endpoint table: one declaration per endpoint, from which everything else comes.
//!
//! [`endpoint_table!`] lists every endpoint once: its variant of
//! [`Endpoint`](super::Endpoint) with the ids of its path, its method and path template, its
//! stable name, the abilities and sides it needs, whether it needs a key, what it bills, its
//! handler and its OpenAPI operation. Like `store_methods!` (`store/delegate.rs`) for the store
//! contract, it hands that list to a
//! callback macro, and each concern expands it where it lives:
//!
//! - `routes` (`define_endpoints!`, from the `routes` list): the [`Endpoint`](super::Endpoint) enum, its
//!   `abilities`, `name`, `sides`, `needs_key` and `billing`, and the dispatch table
//!   [`ROUTES`](super::ROUTES) (routing, 404, 405 and `Allow`, in the table's order);
//! - `api` (`dispatch!`, from `handlers`): `serve`, the call of each endpoint's handler, and `serve_keyless`,
//!   the answer of an endpoint that needs no key;
//! - `openapi` (`operation_specs!`, from `specs`): what each operation of the document says.
//!
//! An entry reads
//!
//! ```text
//! /// `METHOD /path/{id}`.
//! Variant(id: IdType) = METHOD "/path/{id}" {
//!     name: "resource.action",          // logs, spans, metrics and the operationId
//!     abilities: [Ability, ...],        // every one is needed (403 forbidden_ability)
//!     sides: Marketer,                  // a `Sides` variant (403 wrong_side)
//!     key: true,                        // false: answered before the key is read
//!     billing: Free,                    // a `Billing` variant (docs/billing.md)
//!     handler: |ctx, call| module::function(ctx, id, call.body).await,
//!     openapi: { summary: "...", tag: "...", success: (200, Some(Data("View"))), ... },
//! }
//! ```
//!
//! The path's ids, named in the variant, are bound in the handler by those names. The handler
//! is an expression over `ctx` (the handler context: store, caller, clock) and `call` (the
//! request's query, body, headers and mount path); it is evaluated in `api`, where the
//! handler modules are. The `openapi` fields are those of the document's operation spec
//! (`openapi/endpoints.rs`); the ones left out take their defaults (no query parameters, no
//! request body, no error beyond the common ones, no conflict reason, no link).

/// Calls `$callback! { routes [...] handlers [...] specs [...] }` with every endpoint, in the
/// order of the dispatch table (the order in which `Allow` lists methods): the table is read
/// here once (`@read`) and handed over as three lists, what the routes, the dispatch and the
/// OpenAPI document each need of an entry.
macro_rules! endpoint_table {
    ($callback:ident ! ()) => {
        $crate::web::routes::endpoint_table! { @read $callback
            /// `GET /me`.
            Me = GET "/me" {
                name: "me.show",
                abilities: [],
                sides: All,
                key: true,
                billing: Free,
                handler: |ctx, _| me::show(ctx),
                openapi: {
                    summary: "The caller's account and key",
                    tag: "account",
                    success: (200, Some(Data("AccountView"))),
                },
            }
            /// `GET /categories`.
            Categories = GET "/categories" {
                name: "categories.list",
                abilities: [CatalogRead],
                sides: Marketer,
                key: true,
                billing: Free,
                handler: |ctx, call| catalog::categories(ctx, call.query).await,
                openapi: {
                    summary: "Active categories",
                    tag: "catalogue",
                    success: (200, Some(Page("CategoryView"))),
                    query: PAGED,
                    errors: &[422],
                },
            }
            /// `GET /products`.
            Products = GET "/products" {
                name: "products.list",
                abilities: [CatalogRead],
                sides: Marketer,
                key: true,
                billing: Pulls,
                handler: |ctx, call| catalog::products(ctx, call.query).await,
                openapi: {
                    summary: "Active products, with filters and sync",
                    tag: "catalogue",
                    success: (200, Some(Page("ProductView"))),
                    query: &[
                        QueryParam::Page,
                        QueryParam::PerPage,
                        QueryParam::CategoryId,
                        QueryParam::UpdatedSince,
                        QueryParam::Search,
                    ],
                    errors: &[422],
                },
            }
            /// `GET /products/removed`: products stopped since an instant, for sync.
            RemovedProducts = GET "/products/removed" {
                name: "products.removed",
                abilities: [CatalogRead],
                sides: Marketer,
                key: true,
                billing: Free,
                handler: |ctx, call| catalog::removed_products(ctx, call.query).await,
                openapi: {
                    summary: "Products stopped at or after `since`, newest first (for sync)",
                    tag: "catalogue",
                    success: (200, Some(Page("RemovedProduct"))),
                    query: &[QueryParam::Since, QueryParam::Page, QueryParam::PerPage],
                    errors: &[422],
                },
            }
            /// `GET /products/{id}`.
            Product(id: ProductId) = GET "/products/{id}" {
                name: "products.show",
                abilities: [CatalogRead],
                sides: Marketer,
                key: true,
                billing: Pulls,
                handler: |ctx, _| catalog::product(ctx, id.into()).await,
                openapi: {
                    summary: "One product",
                    tag: "catalogue",
                    success: (200, Some(Data("ProductView"))),
                    errors: &[404],
                },
            }
            /// `GET /catalog/changes`: the catalogue change feed, gap-free, for sync.
            CatalogChanges = GET "/catalog/changes" {
                name: "catalog.changes",
                abilities: [CatalogRead],
                sides: Marketer,
                key: true,
                billing: Free,
                handler: |ctx, call| changes::catalog_changes(ctx, call.query).await,
                openapi: {
                    summary: "The catalogue change feed: the products changed after a cursor, in commit order",
                    tag: "catalogue",
                    success: (200, Some(Feed("CatalogChange"))),
                    query: &[QueryParam::After, QueryParam::Limit],
                    errors: &[410, 422],
                    note: Some(CHANGES_NOTE),
                },
            }
            /// `GET /shipping/options`.
            ShippingOptions = GET "/shipping/options" {
                name: "shipping.options",
                abilities: [CatalogRead],
                sides: Marketer,
                key: true,
                billing: Free,
                handler: |ctx, _| shipping::options(ctx).await,
                openapi: {
                    summary: "Shipping options and their governorate rates",
                    tag: "shipping",
                    success: (200, Some(DataList("ShippingOptionView"))),
                },
            }
            /// `POST /shipping/quote`.
            ShippingQuote = POST "/shipping/quote" {
                name: "shipping.quote",
                abilities: [CatalogRead],
                sides: Marketer,
                key: true,
                billing: Pulls,
                handler: |ctx, call| shipping::quote(ctx, call.body).await,
                openapi: {
                    summary: "Prices lines for a governorate, as an order would be",
                    tag: "shipping",
                    success: (200, Some(Data("QuoteView"))),
                    request: Some(("QuoteRequest", false)),
                    errors: &[422],
                },
            }
            /// `GET /orders`.
            ListOrders = GET "/orders" {
                name: "orders.list",
                abilities: [OrdersRead],
                sides: Marketer,
                key: true,
                billing: Free,
                handler: |ctx, call| orders::list(ctx, call.query).await,
                openapi: {
                    summary: "The caller's orders, with filters and sync",
                    tag: "orders",
                    success: (200, Some(Page("OrderView"))),
                    query: &[
                        QueryParam::Page,
                        QueryParam::PerPage,
                        QueryParam::OrderStatus,
                        QueryParam::Family,
                        QueryParam::ExternalReference,
                        QueryParam::Number,
                        QueryParam::UpdatedSince,
                    ],
                    errors: &[422],
                },
            }
            /// `POST /orders`.
            CreateOrder = POST "/orders" {
                name: "orders.create",
                abilities: [OrdersWrite],
                sides: Marketer,
                key: true,
                billing: OrderOperation,
                handler: |ctx, call| orders::create(ctx, call.mount, call.headers, call.body).await,
                openapi: {
                    summary: "Places an order (Idempotency-Key makes a retry safe)",
                    tag: "orders",
                    success: (201, Some(Data("OrderView"))),
                    request: Some(("OrderRequest", false)),
                    errors: &[409, 422],
                    conflicts: &[
                        ConflictReason::DuplicateExternalReference,
                        ConflictReason::IdempotencyKeyReused,
                        ConflictReason::IdempotencyInProgress,
                        ConflictReason::CatalogueChanged,
                    ],
                    idempotent: true,
                    location: Some("The new order's URL."),
                    links: &[
                        Link::from_body("GetOrder", "orders.show"),
                        Link::from_body("CancelOrder", "orders.cancel"),
                    ],
                },
            }
            /// `GET /orders/{id}`.
            Order(id: OrderId) = GET "/orders/{id}" {
                name: "orders.show",
                abilities: [OrdersRead],
                sides: Marketer,
                key: true,
                billing: Free,
                handler: |ctx, _| orders::show(ctx, id).await,
                openapi: {
                    summary: "One order",
                    tag: "orders",
                    success: (200, Some(Data("OrderView"))),
                    errors: &[404],
                },
            }
            /// `POST /orders/{id}/cancel`.
            CancelOrder(id: OrderId) = POST "/orders/{id}/cancel" {
                name: "orders.cancel",
                abilities: [OrdersWrite],
                sides: Marketer,
                key: true,
                billing: OrderOperation,
                handler: |ctx, call| orders::cancel(ctx, id, call.body).await,
                openapi: {
                    summary: "Cancels a pending order",
                    tag: "orders",
                    success: (200, Some(Data("OrderView"))),
                    request: Some(("CancelRequest", true)),
                    errors: &[404, 409, 422],
                    conflicts: &[ConflictReason::NotCancellable],
                },
            }
            /// `GET /wallet`.
            Wallet = GET "/wallet" {
                name: "wallet.show",
                abilities: [WalletRead],
                sides: MarketerOrSupplier,
                key: true,
                billing: Free,
                handler: |ctx, _| wallet::show(ctx).await,
                openapi: {
                    summary: "The wallet and the withdrawal window",
                    tag: "wallet",
                    success: (200, Some(Data("Wallet"))),
                },
            }
            /// `GET /statement`: a supplier's statement.
            Statement = GET "/statement" {
                name: "statement.list",
                abilities: [StatementRead],
                sides: Supplier,
                key: true,
                billing: Free,
                handler: |ctx, call| statement::list(ctx, call.query).await,
                openapi: {
                    summary: "The supplier's statement, newest first (docs/supplier-statement.md)",
                    tag: "statement",
                    success: (200, Some(Page("StatementEntry"))),
                    query: &[
                        QueryParam::Page,
                        QueryParam::PerPage,
                        QueryParam::From,
                        QueryParam::To,
                    ],
                    errors: &[422],
                },
            }
            /// `GET /webhooks`.
            ListWebhooks = GET "/webhooks" {
                name: "webhooks.list",
                abilities: [WebhooksManage],
                sides: MarketerOrSupplier,
                key: true,
                billing: Free,
                handler: |ctx, call| webhooks::list(ctx, call.query).await,
                openapi: {
                    summary: "Webhook endpoints",
                    tag: "webhooks",
                    success: (200, Some(Page("WebhookView"))),
                    query: PAGED,
                    errors: &[422],
                },
            }
            /// `POST /webhooks`.
            CreateWebhook = POST "/webhooks" {
                name: "webhooks.create",
                abilities: [WebhooksManage],
                sides: MarketerOrSupplier,
                key: true,
                billing: Free,
                handler: |ctx, call| webhooks::create(ctx, call.body).await,
                openapi: {
                    summary: "Registers a webhook endpoint (its secret is shown once)",
                    tag: "webhooks",
                    success: (201, Some(Data("WebhookWithSecret"))),
                    request: Some(("WebhookCreate", false)),
                    errors: &[409, 422],
                    conflicts: &[ConflictReason::WebhookLimit],
                    links: &[
                        Link::from_body("GetWebhook", "webhooks.show"),
                        Link::from_body("UpdateWebhook", "webhooks.update"),
                        Link::from_body("PingWebhook", "webhooks.ping"),
                        Link::from_body("RotateWebhookSecret", "webhooks.rotate_secret"),
                        Link::from_body("WebhookDeliveries", "webhooks.deliveries"),
                        Link::from_body("DeleteWebhook", "webhooks.delete"),
                    ],
                    note: Some(ORDER_EVENTS_NEED_ORDERS_READ),
                },
            }
            /// `GET /webhooks/{id}`.
            Webhook(id: WebhookId) = GET "/webhooks/{id}" {
                name: "webhooks.show",
                abilities: [WebhooksManage],
                sides: MarketerOrSupplier,
                key: true,
                billing: Free,
                handler: |ctx, _| webhooks::show(ctx, id).await,
                openapi: {
                    summary: "One webhook endpoint",
                    tag: "webhooks",
                    success: (200, Some(Data("WebhookView"))),
                    errors: &[404],
                },
            }
            /// `PATCH /webhooks/{id}`.
            UpdateWebhook(id: WebhookId) = PATCH "/webhooks/{id}" {
                name: "webhooks.update",
                abilities: [WebhooksManage],
                sides: MarketerOrSupplier,
                key: true,
                billing: Free,
                handler: |ctx, call| webhooks::update(ctx, id, call.body).await,
                openapi: {
                    summary: "Changes a webhook endpoint",
                    tag: "webhooks",
                    success: (200, Some(Data("WebhookView"))),
                    request: Some(("WebhookUpdate", false)),
                    errors: &[404, 422],
                    note: Some(ORDER_EVENTS_NEED_ORDERS_READ),
                },
            }
            /// `DELETE /webhooks/{id}`.
            DeleteWebhook(id: WebhookId) = DELETE "/webhooks/{id}" {
                name: "webhooks.delete",
                abilities: [WebhooksManage],
                sides: MarketerOrSupplier,
                key: true,
                billing: Free,
                handler: |ctx, _| webhooks::delete(ctx, id).await,
                openapi: {
                    summary: "Deletes a webhook endpoint",
                    tag: "webhooks",
                    success: (204, None),
                    errors: &[404],
                },
            }
            /// `POST /webhooks/{id}/rotate_secret`.
            RotateWebhookSecret(id: WebhookId) = POST "/webhooks/{id}/rotate_secret" {
                name: "webhooks.rotate_secret",
                abilities: [WebhooksManage],
                sides: MarketerOrSupplier,
                key: true,
                billing: Free,
                handler: |ctx, _| webhooks::rotate_secret(ctx, id).await,
                openapi: {
                    summary: "Gives an endpoint a new secret (the old one signs for 24 more hours)",
                    tag: "webhooks",
                    success: (200, Some(Data("WebhookWithSecret"))),
                    errors: &[404],
                },
            }
            /// `POST /webhooks/{id}/ping`.
            PingWebhook(id: WebhookId) = POST "/webhooks/{id}/ping" {
                name: "webhooks.ping",
                abilities: [WebhooksManage],
                sides: MarketerOrSupplier,
                key: true,
                billing: Free,
                handler: |ctx, _| webhooks::ping(ctx, id).await,
                openapi: {
                    summary: "Queues a ping event (at most 10 pings and redeliveries wait per endpoint)",
                    tag: "webhooks",
                    success: (202, Some(Data("DeliveryView"))),
                    errors: &[404, 409],
                    conflicts: &[ConflictReason::WebhookDisabled, ConflictReason::WebhookBusy],
                    links: &[Link {
                        name: "Redeliver",
                        operation: "webhooks.redeliver",
                        parameters: &[
                            ("id", "$request.path.id"),
                            ("delivery_id", "$response.body#/data/id"),
                        ],
                    }],
                },
            }
            /// `GET /webhooks/{id}/deliveries`.
            WebhookDeliveries(id: WebhookId) = GET "/webhooks/{id}/deliveries" {
                name: "webhooks.deliveries",
                abilities: [WebhooksManage],
                sides: MarketerOrSupplier,
                key: true,
                billing: Free,
                handler: |ctx, call| webhooks::deliveries(ctx, id, call.query).await,
                openapi: {
                    summary: "An endpoint's deliveries, newest first",
                    tag: "webhooks",
                    success: (200, Some(Page("DeliveryView"))),
                    query: &[QueryParam::Page, QueryParam::PerPage, QueryParam::DeliveryStatus],
                    errors: &[404, 422],
                },
            }
            /// `POST /webhooks/{id}/deliveries/{delivery_id}/redeliver`. A marketer's
            /// redelivery needs `orders:read` besides `webhooks:manage` (checked by the
            /// handler first): it sends an order's data again, maybe to a URL changed since. A
            /// supplier's deliveries never carry an order.
            Redeliver(id: WebhookId, delivery: DeliveryId) =
                POST "/webhooks/{id}/deliveries/{delivery_id}/redeliver" {
                name: "webhooks.redeliver",
                abilities: [WebhooksManage],
                sides: MarketerOrSupplier,
                key: true,
                billing: Free,
                handler: |ctx, _| webhooks::redeliver(ctx, id, delivery).await,
                openapi: {
                    summary: "Queues a delivery again (at most 10 pings and redeliveries wait per endpoint)",
                    tag: "webhooks",
                    success: (202, Some(Data("DeliveryView"))),
                    errors: &[404, 409],
                    conflicts: &[ConflictReason::WebhookDisabled, ConflictReason::WebhookBusy],
                    note: Some(REDELIVERY_NEEDS_ORDERS_READ),
                },
            }
            /// `GET /supply/variants`: the supplier's variants.
            SupplyVariants = GET "/supply/variants" {
                name: "supply.variants",
                abilities: [QuotesRead],
                sides: Supplier,
                key: true,
                billing: Free,
                handler: |ctx, call| quotes::variants(ctx, call.query).await,
                openapi: {
                    summary: "The supplier's variants: supply price, exact stock, pending quote",
                    tag: "supply",
                    success: (200, Some(Page("SupplyVariantView"))),
                    query: &[QueryParam::Page, QueryParam::PerPage, QueryParam::UpdatedSince],
                    errors: &[422],
                },
            }
            /// `GET /quotes`.
            ListQuotes = GET "/quotes" {
                name: "quotes.list",
                abilities: [QuotesRead],
                sides: Supplier,
                key: true,
                billing: Free,
                handler: |ctx, call| quotes::list(ctx, call.query).await,
                openapi: {
                    summary: "The supplier's quotes, newest first, with filters and sync",
                    tag: "quotes",
                    success: (200, Some(Page("SupplierQuoteView"))),
                    query: &[
                        QueryParam::Page,
                        QueryParam::PerPage,
                        QueryParam::QuoteStatus,
                        QueryParam::VariantId,
                        QueryParam::UpdatedSince,
                    ],
                    errors: &[422],
                },
            }
            /// `POST /quotes`.
            CreateQuote = POST "/quotes" {
                name: "quotes.create",
                abilities: [QuotesWrite],
                sides: Supplier,
                key: true,
                billing: Free,
                handler: |ctx, call| quotes::create(ctx, call.mount, call.headers, call.body).await,
                openapi: {
                    summary: "Offers pieces of a variant at a price (Idempotency-Key makes a retry safe)",
                    tag: "quotes",
                    success: (201, Some(Data("SupplierQuoteView"))),
                    request: Some(("SupplierQuoteRequest", false)),
                    errors: &[409, 422],
                    conflicts: &[
                        ConflictReason::QuotePending,
                        ConflictReason::IdempotencyKeyReused,
                        ConflictReason::IdempotencyInProgress,
                    ],
                    idempotent: true,
                    location: Some("The new quote's URL."),
                    links: &[
                        Link::from_body("GetQuote", "quotes.show"),
                        Link::from_body("WithdrawQuote", "quotes.withdraw"),
                    ],
                },
            }
            /// `GET /quotes/{id}`.
            Quote(id: QuoteId) = GET "/quotes/{id}" {
                name: "quotes.show",
                abilities: [QuotesRead],
                sides: Supplier,
                key: true,
                billing: Free,
                handler: |ctx, _| quotes::show(ctx, id).await,
                openapi: {
                    summary: "One of the supplier's quotes",
                    tag: "quotes",
                    success: (200, Some(Data("SupplierQuoteView"))),
                    errors: &[404],
                },
            }
            /// `POST /quotes/{id}/withdraw`.
            WithdrawQuote(id: QuoteId) = POST "/quotes/{id}/withdraw" {
                name: "quotes.withdraw",
                abilities: [QuotesWrite],
                sides: Supplier,
                key: true,
                billing: Free,
                handler: |ctx, _| quotes::withdraw(ctx, id).await,
                openapi: {
                    summary: "Withdraws a pending quote",
                    tag: "quotes",
                    success: (200, Some(Data("SupplierQuoteView"))),
                    errors: &[404, 409],
                    conflicts: &[ConflictReason::NotWithdrawable],
                },
            }
            /// `GET /openapi.json`: the OpenAPI document, served without a key.
            OpenApi = GET "/openapi.json" {
                name: "openapi.show",
                abilities: [],
                sides: All,
                key: false,
                billing: Free,
                handler: |_, call| Ok(openapi_document(call.mount)),
                openapi: {
                    summary: "This document",
                    tag: "meta",
                    success: (200, Some(Object)),
                },
            }
            /// `GET /docs`: the document rendered as a reference page (HTML), served without a
            /// key. A page for people, not an operation: it is not in the document.
            Docs = GET "/docs" {
                name: "docs.show",
                abilities: [],
                sides: All,
                key: false,
                billing: Free,
                handler: |_, _| Ok(reference_page()),
                openapi: {
                    summary: "This document as a reference page",
                    tag: "meta",
                    documented: false,
                },
            }
            /// `POST /sandbox/orders/{id}/status` (test mode only): the platform's move of an
            /// order.
            SandboxMoveOrder(id: OrderId) = POST "/sandbox/orders/{id}/status" {
                name: "sandbox.orders.status",
                abilities: [OrdersWrite],
                sides: Marketer,
                key: true,
                billing: Free,
                handler: |ctx, call| sandbox::move_order(ctx, id, call.body).await,
                openapi: {
                    summary: "Sandbox test mode: moves one of the caller's orders as the platform would",
                    tag: "sandbox",
                    success: (200, Some(Data("OrderView"))),
                    request: Some(("SandboxMoveRequest", false)),
                    errors: &[404, 409, 422],
                    conflicts: &[ConflictReason::MoveNotAllowed],
                },
            }
            /// `POST /sandbox/quotes/{id}/decision` (test mode only): the platform's decision
            /// on one of the supplier's quotes.
            SandboxDecideQuote(id: QuoteId) = POST "/sandbox/quotes/{id}/decision" {
                name: "sandbox.quotes.decision",
                abilities: [QuotesWrite],
                sides: Supplier,
                key: true,
                billing: Free,
                handler: |ctx, call| quotes::sandbox_decision(ctx, id, call.body).await,
                openapi: {
                    summary: "Sandbox test mode: accepts or rejects one of the caller's quotes as the platform would",
                    tag: "sandbox",
                    success: (200, Some(Data("SupplierQuoteView"))),
                    request: Some(("QuoteDecisionRequest", false)),
                    errors: &[404, 409, 422],
                    conflicts: &[ConflictReason::MoveNotAllowed],
                },
            }
            /// `GET /sandbox/clock` (test mode only): the sandbox's clock.
            SandboxClock = GET "/sandbox/clock" {
                name: "sandbox.clock.show",
                abilities: [],
                sides: All,
                key: true,
                billing: Free,
                handler: |ctx, _| sandbox::clock(ctx),
                openapi: {
                    summary: "Sandbox test mode: the sandbox's clock",
                    tag: "sandbox",
                    success: (200, Some(Data("SandboxClock"))),
                    // A production engine answers 404, as any unknown path.
                    errors: &[404],
                },
            }
            /// `POST /sandbox/clock` (test mode only): moves the sandbox's clock forward.
            SandboxAdvanceClock = POST "/sandbox/clock" {
                name: "sandbox.clock.advance",
                abilities: [],
                sides: All,
                key: true,
                billing: Free,
                handler: |ctx, call| sandbox::advance_clock(ctx, call.body),
                openapi: {
                    summary: "Sandbox test mode: moves the sandbox's clock forward, for everyone",
                    tag: "sandbox",
                    success: (200, Some(Data("SandboxClock"))),
                    request: Some(("SandboxClockAdvance", false)),
                    errors: &[404, 422],
                },
            }
        }
    };
    (@read $callback:ident
        $(
            $(#[$doc:meta])*
            $variant:ident $( ( $($id:ident : $ty:ty),* ) )? = $method:ident $path:literal {
                name: $name:literal,
                abilities: [$($ability:ident),*],
                sides: $sides:ident,
                key: $key:tt,
                billing: $billing:ident,
                handler: |$ctx:pat_param, $call:pat_param| $serve:expr,
                openapi: { $($field:ident : $value:expr),* $(,)? },
            }
        )*
    ) => {
        $callback! {
            routes [$(
                [$(#[$doc])*] $variant [$( ($($id: $ty),*) )?] $method $path
                $name [$($ability)*] $sides $key $billing;
            )*]
            handlers [$( $variant [$( ($($id),*) )?] $key |$ctx, $call| $serve; )*]
            specs [$( $variant { $($field: $value),* }; )*]
        }
    };
}

pub(crate) use endpoint_table;
