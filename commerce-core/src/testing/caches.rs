//! The engine's rendered-JSON caches, filled with records a store made: each holds at most its
//! bound in bytes, keeps the newest rendering, and keeps none heavier than the bound.
//!
//! These test the engine, not a backend: they run on the memory store (`tests/caches.rs`),
//! outside the backend suite.

use crate::cache::rendered_orders::RenderedOrders;
use crate::cache::rendered_products::RenderedProducts;
use crate::domain::earnings::PayoutRules;
use crate::model::*;
use crate::store::*;

use super::store_cases::fixtures::*;

/// Orders of 100 lines, each with a warranty, and a long note: tens of KiB of JSON each.
async fn large_orders(store: &dyn Store, count: u32) -> Vec<Order> {
    let f = fixture(store, 100_000, 100_000).await;
    let mut orders = Vec::new();
    for n in 1..=count {
        let lines = (0..100)
            .map(|i| {
                line(
                    &f,
                    if i % 2 == 0 { &f.variant } else { &f.variant_b },
                    1,
                    true,
                )
            })
            .collect();
        let mut order = new_order(&f, f.account.id, &number(n), lines, i64::from(n));
        order.note = Some("ملاحظة طويلة للفريق ".repeat(50));
        orders.push(place(store, order).await);
    }
    orders
}

/// A cache bounded to three and a half large orders never holds more bytes than its bound,
/// always keeps the order rendered last and some before it; one bounded below a single order
/// keeps nothing (and answers with its rendering all the same).
pub async fn rendered_orders_are_bounded_in_bytes(store: &dyn Store) {
    let orders = large_orders(store, 12).await;
    let rules = PayoutRules::new(base_time(), 14).expect("hold days");
    let one = {
        let roomy = RenderedOrders::new(crate::limits::RENDERED_CACHE_BYTES);
        roomy.render(&orders[0], rules);
        roomy.bytes()
    };
    assert!(one > 20_000, "an order of 100 lines weighs {one} bytes");
    let bound = one * 7 / 2;
    let cache = RenderedOrders::new(usize::try_from(bound).unwrap());
    for order in &orders {
        cache.render(order, rules);
        assert!(cache.bytes() <= bound, "{} > {bound}", cache.bytes());
        assert!(
            cache.get(OrderVersion::of(order), rules).is_some(),
            "the newest order is kept"
        );
    }
    let kept = orders
        .iter()
        .filter(|o| cache.get(OrderVersion::of(o), rules).is_some())
        .count();
    assert!((2..=3).contains(&kept), "{kept} orders kept");

    let small = RenderedOrders::new(usize::try_from(one - 1).unwrap());
    let rendered = small.render(&orders[0], rules);
    assert_eq!(
        rendered.json().get(),
        cache.render(&orders[0], rules).json().get(),
        "the same JSON whether kept or not"
    );
    assert_eq!(
        small.bytes(),
        0,
        "an order heavier than the bound is not kept"
    );
    assert!(small.get(OrderVersion::of(&orders[0]), rules).is_none());
}

/// The same for products: the bound holds, the newest is kept, an oversized one is not.
pub async fn rendered_products_are_bounded_in_bytes(store: &dyn Store) {
    let cat = category(store, "bounded", None).await;
    let mut products = Vec::new();
    for n in 0..20 {
        let p = product(store, &format!("Bounded Product {n}"), cat.id, n).await;
        let p = store.product(p.id).await.expect("read").expect("found");
        products.push(p);
    }
    let one = {
        let roomy = RenderedProducts::new(crate::limits::RENDERED_CACHE_BYTES);
        roomy.render(&products[0], &cat.name);
        roomy.bytes()
    };
    let bound = one * 9 / 2;
    let cache = RenderedProducts::new(usize::try_from(bound).unwrap());
    for product in &products {
        cache.render(product, &cat.name);
        assert!(cache.bytes() <= bound, "{} > {bound}", cache.bytes());
        assert!(cache.keeps(product.id), "the newest product is kept");
    }
    let kept = products.iter().filter(|p| cache.keeps(p.id)).count();
    assert!((2..=4).contains(&kept), "{kept} products kept");

    let small = RenderedProducts::new(usize::try_from(one - 1).unwrap());
    let rendered = small.render(&products[0], &cat.name);
    assert_eq!(
        rendered.json().get(),
        cache.render(&products[0], &cat.name).json().get()
    );
    assert_eq!(
        small.bytes(),
        0,
        "a product heavier than the bound is not kept"
    );
    assert!(!small.keeps(products[0].id));
}
