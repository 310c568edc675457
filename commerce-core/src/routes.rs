//! The dispatch table: `(method, path)` to an endpoint, with what each endpoint requires.

use http::{HeaderValue, Method, header};

use crate::error::{ApiError, ErrorCode};
use crate::messages;
use crate::model::{Ability, OrderId, ProductId};

/// The path prefix every endpoint lives under.
pub const API_PREFIX: &str = "/api/v1";

/// The path an adapter mounted the API under (`/shop` for `/shop/api/v1/...`), passed to the
/// engine as a request extension so that the `Location` of a new order is the URL the client
/// can follow. Without it, `Location` is `/api/v1/orders/{id}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MountPrefix(pub String);

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
}

/// An endpoint of the API, with its path parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `GET /me`.
    Me,
    /// `GET /categories`.
    Categories,
    /// `GET /products`.
    Products,
    /// `GET /products/{id}`.
    Product(ProductId),
    /// `GET /shipping/options`.
    ShippingOptions,
    /// `POST /shipping/quote`.
    ShippingQuote,
    /// `GET /orders`.
    ListOrders,
    /// `POST /orders`.
    CreateOrder,
    /// `GET /orders/{id}`.
    Order(OrderId),
    /// `POST /orders/{id}/cancel`.
    CancelOrder(OrderId),
    /// `GET /wallet`.
    Wallet,
}

/// Which account sides an endpoint serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sides {
    /// Every side, shipping companies included (`/me`).
    All,
    /// Marketers and suppliers (`/wallet`).
    MarketerOrSupplier,
    /// Marketers only (catalogue, shipping, orders).
    Marketer,
}

impl Endpoint {
    /// The ability a key needs (`None`: any key).
    pub fn ability(self) -> Option<Ability> {
        match self {
            Endpoint::Me => None,
            Endpoint::Categories
            | Endpoint::Products
            | Endpoint::Product(_)
            | Endpoint::ShippingOptions
            | Endpoint::ShippingQuote => Some(Ability::CatalogRead),
            Endpoint::ListOrders | Endpoint::Order(_) => Some(Ability::OrdersRead),
            Endpoint::CreateOrder | Endpoint::CancelOrder(_) => Some(Ability::OrdersWrite),
            Endpoint::Wallet => Some(Ability::WalletRead),
        }
    }

    /// A stable name for logs, spans and metrics (`"orders.create"`): the resource and the
    /// action, never a path parameter, so that it stays one label value per endpoint.
    pub fn name(self) -> &'static str {
        match self {
            Endpoint::Me => "me.show",
            Endpoint::Categories => "categories.list",
            Endpoint::Products => "products.list",
            Endpoint::Product(_) => "products.show",
            Endpoint::ShippingOptions => "shipping.options",
            Endpoint::ShippingQuote => "shipping.quote",
            Endpoint::ListOrders => "orders.list",
            Endpoint::CreateOrder => "orders.create",
            Endpoint::Order(_) => "orders.show",
            Endpoint::CancelOrder(_) => "orders.cancel",
            Endpoint::Wallet => "wallet.show",
        }
    }

    /// The sides it serves.
    pub fn sides(self) -> Sides {
        match self {
            Endpoint::Me => Sides::All,
            Endpoint::Wallet => Sides::MarketerOrSupplier,
            _ => Sides::Marketer,
        }
    }
}

fn parse_id(segment: &str) -> Option<i64> {
    if segment.is_empty() || !segment.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    segment.parse().ok()
}

/// The endpoint name of a request that matched no route (404 or 405): one value for every
/// unknown path, so that the raw path never becomes a label.
pub const UNMATCHED: &str = "unmatched";

/// Resolves a request line; 404 for an unknown path, 405 with `Allow` for a wrong method.
pub fn resolve(method: &Method, path: &str) -> Result<Endpoint, ApiError> {
    let not_found = || ApiError::not_found().with_message(messages::ROUTE_NOT_FOUND);
    let rest = path.strip_prefix(API_PREFIX).ok_or_else(not_found)?;
    let segments: Vec<&str> = rest
        .strip_prefix('/')
        .ok_or_else(not_found)?
        .split('/')
        .collect();
    // (endpoint for GET, endpoint for POST)
    let (get, post) = match segments.as_slice() {
        ["me"] => (Some(Endpoint::Me), None),
        ["categories"] => (Some(Endpoint::Categories), None),
        ["products"] => (Some(Endpoint::Products), None),
        ["products", id] => (
            Some(Endpoint::Product(ProductId(
                parse_id(id).ok_or_else(not_found)?,
            ))),
            None,
        ),
        ["shipping", "options"] => (Some(Endpoint::ShippingOptions), None),
        ["shipping", "quote"] => (None, Some(Endpoint::ShippingQuote)),
        ["orders"] => (Some(Endpoint::ListOrders), Some(Endpoint::CreateOrder)),
        ["orders", id] => (
            Some(Endpoint::Order(OrderId(
                parse_id(id).ok_or_else(not_found)?,
            ))),
            None,
        ),
        ["orders", id, "cancel"] => (
            None,
            Some(Endpoint::CancelOrder(OrderId(
                parse_id(id).ok_or_else(not_found)?,
            ))),
        ),
        ["wallet"] => (Some(Endpoint::Wallet), None),
        _ => return Err(not_found()),
    };
    let chosen = match *method {
        Method::GET | Method::HEAD => get,
        Method::POST => post,
        _ => None,
    };
    chosen.ok_or_else(|| {
        let allow = match (get, post) {
            (Some(_), Some(_)) => "GET, HEAD, POST",
            (Some(_), None) => "GET, HEAD",
            _ => "POST",
        };
        ApiError::new(ErrorCode::MethodNotAllowed)
            .with_header(header::ALLOW, HeaderValue::from_static(allow))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_every_endpoint() {
        assert_eq!(resolve(&Method::GET, "/api/v1/me").unwrap(), Endpoint::Me);
        assert_eq!(
            resolve(&Method::GET, "/api/v1/products/12").unwrap(),
            Endpoint::Product(ProductId(12))
        );
        assert_eq!(
            resolve(&Method::POST, "/api/v1/orders").unwrap(),
            Endpoint::CreateOrder
        );
        assert_eq!(
            resolve(&Method::POST, "/api/v1/orders/7/cancel").unwrap(),
            Endpoint::CancelOrder(OrderId(7))
        );
    }

    #[test]
    fn wrong_method_is_405_with_allow() {
        let e = resolve(&Method::DELETE, "/api/v1/orders").unwrap_err();
        assert_eq!(e.code, ErrorCode::MethodNotAllowed);
        assert_eq!(e.headers[0].1, "GET, HEAD, POST");
        let e = resolve(&Method::GET, "/api/v1/shipping/quote").unwrap_err();
        assert_eq!(e.headers[0].1, "POST");
    }

    #[test]
    fn unknown_paths_and_bad_ids_are_404() {
        for path in [
            "/api/v1/nope",
            "/api/v1/products/abc",
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
                resolve(&Method::GET, path).unwrap_err().code,
                ErrorCode::NotFound,
                "{path}"
            );
        }
    }
}
