//! The dispatch table: `(method, path)` to an endpoint, with what each endpoint requires.

use http::{HeaderValue, Method, header};

use crate::error::{ApiError, ErrorCode};
use crate::model::{Ability, DeliveryId, OrderId, ProductId, QuoteId, Side, WebhookId};
use crate::render::messages;

/// The path prefix every endpoint lives under.
pub const API_PREFIX: &str = "/api/v1";

/// The path an adapter mounted the API under (`/shop` for `/shop/api/v1/...`), passed to the
/// engine as a request extension so that the `Location` of a new order is the URL the client
/// can follow. Without it, `Location` is `/api/v1/orders/{id}`. Made by [`MountPrefix::new`]
/// only, so that it is always normalised.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MountPrefix(String);

impl MountPrefix {
    /// A prefix from a path: surrounding slashes are normalised (`"shop/"` -> `"/shop"`,
    /// `"/"` -> `""`).
    pub fn new(path: &str) -> Self {
        let trimmed = path.trim_matches('/');
        Self(if trimmed.is_empty() {
            String::new()
        } else {
            format!("/{trimmed}")
        })
    }

    /// The prefix: `""`, or `/` and the path without a trailing slash (`"/shop"`).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

mod table;

pub(crate) use table::endpoint_table;

/// Which account sides an endpoint serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sides {
    /// Every side, shipping companies included (`/me`).
    All,
    /// Marketers and suppliers (`/wallet`).
    MarketerOrSupplier,
    /// Marketers only (catalogue, shipping, orders, webhooks).
    Marketer,
    /// Suppliers only (the supply side: variants, quotes, statement).
    Supplier,
}

impl Sides {
    /// Whether an account of `side` may call an endpoint that serves these sides.
    pub fn serve(self, side: Side) -> bool {
        match self {
            Sides::All => true,
            Sides::MarketerOrSupplier => matches!(side, Side::Marketer | Side::Supplier),
            Sides::Marketer => side == Side::Marketer,
            Sides::Supplier => side == Side::Supplier,
        }
    }
}

/// What a call of an endpoint counts in the billing meter (docs/billing.md). The handlers
/// record it; the table declares it so that a test holds it to the document.
#[cfg(feature = "testing")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Billing {
    /// Nothing.
    Free,
    /// The products it returns or prices, each once per month.
    Pulls,
    /// One order operation when it executes.
    OrderOperation,
}

/// Expands the endpoint table (`endpoint_table!`) into the [`Endpoint`] enum, what each
/// endpoint requires, and the dispatch table [`ROUTES`].
macro_rules! define_endpoints {
    (routes [$(
        [$(#[$doc:meta])*] $variant:ident [$( ($($id:ident : $ty:ty),*) )?] $method:ident
        $path:literal $name:literal [$($ability:ident)*] $sides:ident $key:tt $billing:ident;
    )*] $($others:tt)*) => {
        /// An endpoint of the API, with its path parameters.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Endpoint {
            $( $(#[$doc])* $variant $( ( $($ty),* ) )?, )*
        }

        impl Endpoint {
            /// Every ability a key needs. Registering or changing an endpoint that receives
            /// order events also needs `orders:read`, which depends on the body and is
            /// checked by the handler.
            pub fn abilities(self) -> &'static [Ability] {
                match self {
                    $( Endpoint::$variant { .. } => &[$(Ability::$ability),*], )*
                }
            }

            /// A stable name for logs, spans and metrics (`"orders.create"`): the resource and
            /// the action, never a path parameter, so that it stays one label value per
            /// endpoint.
            pub fn name(self) -> &'static str {
                match self {
                    $( Endpoint::$variant { .. } => $name, )*
                }
            }

            /// Whether it needs a key. Only the OpenAPI document does not: it is answered
            /// before the key is read, so it never counts toward a rate limit.
            pub fn needs_key(self) -> bool {
                match self {
                    $( Endpoint::$variant { .. } => $key, )*
                }
            }

            /// The sides it serves.
            pub fn sides(self) -> Sides {
                match self {
                    $( Endpoint::$variant { .. } => Sides::$sides, )*
                }
            }

            /// What a call counts in the billing meter (the handler records it).
            #[cfg(feature = "testing")]
            pub fn billing(self) -> Billing {
                match self {
                    $( Endpoint::$variant { .. } => Billing::$billing, )*
                }
            }
        }

        /// The dispatch table: every route the engine serves, in the order `Allow` lists
        /// methods.
        pub static ROUTES: &[Route] = &[
            $(
                Route {
                    method: Method::$method,
                    path: $path,
                    build: |ids| {
                        let _ = ids;
                        $( let &[$($id,)* ..] = ids else {
                            unreachable!("a route is built from its template's ids")
                        }; )?
                        Endpoint::$variant $( ( $( <$ty>::new($id) ),* ) )?
                    },
                },
            )*
        ];
    };
}

endpoint_table!(define_endpoints!());

impl Endpoint {
    /// The ability of the endpoint's resource, the first of [`abilities`](Self::abilities)
    /// (`None`: any key).
    pub fn ability(self) -> Option<Ability> {
        self.abilities().first().copied()
    }
}

/// One row of the dispatch table: a method and a path template under [`API_PREFIX`] whose
/// `{...}` segments are ids (positive integers), and the endpoint they make.
#[derive(Debug)]
pub struct Route {
    /// The method (`HEAD` is served wherever `GET` is).
    pub method: Method,
    /// The path under [`API_PREFIX`], e.g. `/orders/{id}/cancel`.
    pub path: &'static str,
    /// The endpoint, from the path's ids in order.
    build: fn(&[i64]) -> Endpoint,
}

impl Route {
    /// The endpoint this route makes from its path's ids (as many as the template has).
    pub fn endpoint(&self, ids: &[i64]) -> Endpoint {
        (self.build)(ids)
    }

    /// Whether only an engine in test mode ([`Config::test_mode`](crate::config::Config::test_mode))
    /// serves it: the routes under `/api/v1/sandbox/`. Any other engine answers them 404, as
    /// any unknown path.
    pub fn test_mode_only(&self) -> bool {
        self.path.starts_with(SANDBOX_PREFIX)
    }
}

/// The paths under [`API_PREFIX`] that only the sandbox's test mode serves.
pub const SANDBOX_PREFIX: &str = "/sandbox/";

fn parse_id(segment: &str) -> Option<i64> {
    if segment.is_empty() || !segment.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    segment.parse().ok()
}

/// The ids of `segments` if they fit `template` (`None` when they do not).
fn match_template(template: &str, segments: &[&str], ids: &mut Vec<i64>) -> Option<()> {
    ids.clear();
    let mut parts = template.split('/').skip(1);
    for segment in segments {
        let part = parts.next()?;
        if part.starts_with('{') {
            ids.push(parse_id(segment)?);
        } else if part != *segment {
            return None;
        }
    }
    parts.next().is_none().then_some(())
}

/// The route that serves `method path` and the ids of its path (`HEAD` is `GET`'s route);
/// `None` when the engine answers 404 or 405.
// Only the contract test (through `testing::dispatch`) asks for the route itself.
#[cfg(feature = "testing")]
pub fn route_of(method: &Method, path: &str) -> Option<(&'static Route, Vec<i64>)> {
    let rest = path.strip_prefix(API_PREFIX)?.strip_prefix('/')?;
    let segments: Vec<&str> = rest.split('/').collect();
    let wanted = if *method == Method::HEAD {
        &Method::GET
    } else {
        method
    };
    let mut ids = Vec::with_capacity(2);
    ROUTES.iter().find_map(|route| {
        (route.method == *wanted && match_template(route.path, &segments, &mut ids).is_some())
            .then(|| (route, ids.clone()))
    })
}

/// The endpoint name of a request that matched no route (404 or 405): one value for every
/// unknown path, so that the raw path never becomes a label.
pub const UNMATCHED: &str = "unmatched";

/// Resolves a request line; 404 for an unknown path, 405 with `Allow` for a wrong method.
/// Without `test_mode` the routes of the test mode ([`Route::test_mode_only`]) are unknown
/// paths.
pub fn resolve(method: &Method, path: &str, test_mode: bool) -> Result<Endpoint, ApiError> {
    let not_found = || ApiError::not_found().with_message(messages::ROUTE_NOT_FOUND);
    let rest = path.strip_prefix(API_PREFIX).ok_or_else(not_found)?;
    let segments: Vec<&str> = rest
        .strip_prefix('/')
        .ok_or_else(not_found)?
        .split('/')
        .collect();
    let wanted = if *method == Method::HEAD {
        &Method::GET
    } else {
        method
    };
    let mut ids = Vec::with_capacity(2);
    let mut allowed: Vec<&'static str> = Vec::new();
    for route in ROUTES {
        if (route.test_mode_only() && !test_mode)
            || match_template(route.path, &segments, &mut ids).is_none()
        {
            continue;
        }
        if route.method == *wanted {
            return Ok(route.endpoint(&ids));
        }
        allowed.push(route.method.as_str());
        if route.method == Method::GET {
            allowed.push("HEAD");
        }
    }
    if allowed.is_empty() {
        return Err(not_found());
    }
    let allow = HeaderValue::from_str(&allowed.join(", ")).expect("method names are header-safe");
    Err(ApiError::new(ErrorCode::MethodNotAllowed).with_header(header::ALLOW, allow))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_every_endpoint() {
        assert_eq!(
            resolve(&Method::GET, "/api/v1/me", false).unwrap(),
            Endpoint::Me
        );
        assert_eq!(
            resolve(&Method::GET, "/api/v1/products/12", false).unwrap(),
            Endpoint::Product(ProductId::new(12))
        );
        assert_eq!(
            resolve(&Method::POST, "/api/v1/orders", false).unwrap(),
            Endpoint::CreateOrder
        );
        assert_eq!(
            resolve(&Method::POST, "/api/v1/orders/7/cancel", false).unwrap(),
            Endpoint::CancelOrder(OrderId::new(7))
        );
    }

    #[test]
    fn wrong_method_is_405_with_allow() {
        let e = resolve(&Method::DELETE, "/api/v1/orders", false).unwrap_err();
        assert_eq!(e.code(), ErrorCode::MethodNotAllowed);
        assert_eq!(e.headers()[0].1, "GET, HEAD, POST");
        let e = resolve(&Method::GET, "/api/v1/shipping/quote", false).unwrap_err();
        assert_eq!(e.headers()[0].1, "POST");
        let e = resolve(&Method::POST, "/api/v1/webhooks/3", false).unwrap_err();
        assert_eq!(e.headers()[0].1, "GET, HEAD, PATCH, DELETE");
        assert_eq!(
            resolve(
                &Method::POST,
                "/api/v1/webhooks/3/deliveries/9/redeliver",
                false
            )
            .unwrap(),
            Endpoint::Redeliver(WebhookId::new(3), DeliveryId::new(9))
        );
        assert_eq!(
            resolve(&Method::HEAD, "/api/v1/webhooks", false).unwrap(),
            Endpoint::ListWebhooks
        );
    }

    #[test]
    fn removed_is_not_an_id_and_sandbox_paths_need_the_test_mode() {
        assert_eq!(
            resolve(&Method::GET, "/api/v1/products/removed", false).unwrap(),
            Endpoint::RemovedProducts
        );
        assert_eq!(
            resolve(&Method::GET, "/api/v1/products/7", false).unwrap(),
            Endpoint::Product(ProductId::new(7))
        );
        assert_eq!(
            resolve(&Method::POST, "/api/v1/products/removed", false)
                .unwrap_err()
                .headers()[0]
                .1,
            "GET, HEAD"
        );
        for (method, path) in [
            (Method::POST, "/api/v1/sandbox/orders/3/status"),
            (Method::GET, "/api/v1/sandbox/clock"),
            (Method::POST, "/api/v1/sandbox/clock"),
            (Method::DELETE, "/api/v1/sandbox/clock"),
            (Method::GET, "/api/v1/sandbox/orders/3/status"),
        ] {
            assert_eq!(
                resolve(&method, path, false).unwrap_err().code(),
                ErrorCode::NotFound,
                "{method} {path}"
            );
        }
        assert_eq!(
            resolve(&Method::POST, "/api/v1/sandbox/orders/3/status", true).unwrap(),
            Endpoint::SandboxMoveOrder(OrderId::new(3))
        );
        assert_eq!(
            resolve(&Method::DELETE, "/api/v1/sandbox/clock", true)
                .unwrap_err()
                .headers()[0]
                .1,
            "GET, HEAD, POST"
        );
    }

    #[test]
    fn a_mount_prefix_is_normalised() {
        for (path, prefix) in [
            ("", ""),
            ("/", ""),
            ("//", ""),
            ("shop", "/shop"),
            ("shop/", "/shop"),
            ("/shop/", "/shop"),
            ("/a/b/", "/a/b"),
        ] {
            assert_eq!(MountPrefix::new(path).as_str(), prefix, "{path:?}");
        }
        assert_eq!(MountPrefix::default().as_str(), "");
    }

    #[test]
    fn each_sides_value_serves_exactly_its_sides() {
        let served = |sides: Sides| -> Vec<Side> {
            [Side::Marketer, Side::Supplier, Side::Shipping]
                .into_iter()
                .filter(|side| sides.serve(*side))
                .collect()
        };
        assert_eq!(
            served(Sides::All),
            [Side::Marketer, Side::Supplier, Side::Shipping]
        );
        assert_eq!(
            served(Sides::MarketerOrSupplier),
            [Side::Marketer, Side::Supplier]
        );
        assert_eq!(served(Sides::Marketer), [Side::Marketer]);
        assert_eq!(served(Sides::Supplier), [Side::Supplier]);
    }

    #[test]
    fn every_route_of_the_table_builds_its_endpoint_from_its_ids() {
        assert_eq!(
            ROUTES.len(),
            ROUTES
                .iter()
                .map(|r| (r.method.as_str(), r.path))
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            "one route per method and path"
        );
        for route in ROUTES {
            let concrete: String = route
                .path
                .split('/')
                .map(|s| if s.starts_with('{') { "7" } else { s })
                .collect::<Vec<_>>()
                .join("/");
            let endpoint = route.endpoint(&[7, 7]);
            assert_eq!(
                resolve(&route.method, &format!("{API_PREFIX}{concrete}"), true).unwrap(),
                endpoint,
                "{} {}",
                route.method,
                route.path
            );
            assert_eq!(
                route.test_mode_only(),
                endpoint.name().starts_with("sandbox."),
                "{}",
                route.path
            );
        }
    }

    #[test]
    fn unknown_paths_and_bad_ids_are_404() {
        for path in [
            "/api/v1/nope",
            "/api/v1/products/abc",
            "/api/v1/products/removed/1",
            "/api/v1/products/Removed",
            "/api/v1/products/-1",
            "/api/v2/me",
            "/API/v1/me",
            "/api/v1/me/",
            "/api/v1/products/99999999999999999999",
            "/api/v1/products/%31",
            "/api/v1",
            "/api/v1/",
            "//api/v1/me",
            "/",
        ] {
            assert_eq!(
                resolve(&Method::GET, path, false).unwrap_err().code(),
                ErrorCode::NotFound,
                "{path}"
            );
        }
    }
}
