//! Fixture helpers the cases share: fixed instants, accounts, a catalogue, orders.

use chrono::{DateTime, Duration, TimeZone, Utc};
use rust_decimal::Decimal;

use crate::model::*;
use crate::money::round_money;
use crate::operator::MAX_LIVE_KEYS;
use crate::store::*;
pub(crate) use crate::testing::Absent;

/// The instant fixtures count from (a whole second, UTC).
pub fn base_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap()
}

pub(crate) fn at(seconds: i64) -> DateTime<Utc> {
    base_time() + Duration::seconds(seconds)
}

pub(crate) fn d(text: &str) -> Decimal {
    text.parse().expect("decimal literal")
}

pub(crate) const MONTH: &str = "2026-03";

/// The billing month `text` (`YYYY-MM`).
pub(crate) fn month(text: &str) -> BillingMonth {
    BillingMonth::parse(text).expect("a billing month")
}

pub(crate) fn ids<T, I>(items: &[T], id: impl Fn(&T) -> I) -> Vec<I> {
    items.iter().map(id).collect()
}

pub(crate) fn order_ids(page: &Page<Order>) -> Vec<OrderId> {
    ids(&page.items, |o| o.id)
}

pub(crate) fn product_ids(page: &Page<Product>) -> Vec<ProductId> {
    ids(&page.items, |p| p.id)
}

pub(crate) fn page(page: u32, per_page: u32) -> PageRequest {
    PageRequest::new(page, per_page).expect("a valid page")
}

pub(crate) async fn account(store: &dyn Store, name: &str) -> Account {
    store
        .insert_account(
            NewAccount {
                name: name.to_owned(),
                store_name: Some(format!("متجر {name}")),
                email: format!("{}@example.com", name.to_lowercase()),
                phone: "01012345678".into(),
                side: Side::Marketer,
                state: AccountState::Active,
                api_status: ApiStatus::Approved,
            },
            at(0),
        )
        .await
        .expect("insert account")
}

pub(crate) async fn key(store: &dyn Store, account: AccountId, seed: u8) -> ApiKey {
    store
        .insert_key(
            NewKeyRecord {
                account_id: account,
                name: format!("key {seed}"),
                hash: [seed; 32],
                abilities: Ability::ALL.to_vec(),
                expires_at: None,
                rate_limit: 120,
            },
            at(0),
            MAX_LIVE_KEYS,
        )
        .await
        .expect("insert key")
}

pub(crate) async fn category(
    store: &dyn Store,
    slug: &str,
    parent: Option<CategoryId>,
) -> Category {
    store
        .insert_category(NewCategory {
            name: format!("قسم {slug}"),
            slug: slug.to_owned(),
            parent_id: parent,
        })
        .await
        .expect("insert category")
}

pub(crate) async fn product(
    store: &dyn Store,
    title: &str,
    category: CategoryId,
    now: i64,
) -> Product {
    store
        .insert_product(
            NewProduct {
                title: title.to_owned(),
                slug: title.to_lowercase().replace(' ', "-"),
                category_id: category,
                description: format!("وصف {title}\nسطر ثاني"),
                images: vec![
                    "https://img.example.com/1.jpg".into(),
                    "https://img.example.com/2.jpg".into(),
                ],
                files: vec![],
                video_url: None,
                marketing_files_url: Some("https://files.example.com/m.zip".into()),
                url: format!("https://shop.example.com/p/{}", title.len()),
                supplier_id: None,
            },
            at(now),
        )
        .await
        .expect("insert product")
}

pub(crate) async fn variant(
    store: &dyn Store,
    product: ProductId,
    label: &str,
    price: &str,
    available: i64,
    now: i64,
) -> Variant {
    store
        .insert_variant(
            product,
            NewVariant {
                label: label.to_owned(),
                price: d(price),
                suggested_min: d(price) + d("10.00"),
                suggested_max: d(price) + d("50.00"),
                available,
                supply_price: round_money(d(price) / d("2")),
            },
            at(now),
        )
        .await
        .expect("insert variant")
}

pub(crate) async fn warranty(
    store: &dyn Store,
    product: ProductId,
    name: &str,
    now: i64,
) -> Warranty {
    store
        .insert_warranty(
            product,
            NewWarranty {
                name: name.to_owned(),
                admin_fee: d("15.00"),
                percent: d("2.50"),
                price_from: d("20.00"),
                duration_days: 365,
                terms: "الشروط:\n- سطر أول\n- سطر ثاني".into(),
                icon_url: Some("https://img.example.com/w.png".into()),
            },
            at(now),
        )
        .await
        .expect("insert warranty")
}

pub(crate) async fn available(store: &dyn Store, product: ProductId, variant: VariantId) -> i64 {
    store
        .product(product)
        .await
        .expect("product")
        .expect("product exists")
        .variants
        .iter()
        .find(|v| v.id == variant)
        .expect("variant exists")
        .available
}

/// A catalogue, a shipping option and two accounts.
pub(crate) struct Fixture {
    pub(crate) account: Account,
    pub(crate) other: Account,
    pub(crate) product: Product,
    pub(crate) variant: Variant,
    pub(crate) variant_b: Variant,
    pub(crate) warranty: Warranty,
    pub(crate) governorate: Governorate,
    pub(crate) option: ShippingOption,
}

pub(crate) async fn fixture(store: &dyn Store, stock: i64, stock_b: i64) -> Fixture {
    let account_a = account(store, "Alpha").await;
    let other = account(store, "Beta").await;
    let cat = category(store, "kitchen", None).await;
    let p = product(store, "Electric Kettle", cat.id, 0).await;
    let v = variant(store, p.id, "أبيض", "125.40", stock, 0).await;
    let vb = variant(store, p.id, "أسود", "99.99", stock_b, 0).await;
    let w = warranty(store, p.id, "ضمان سنة", 0).await;
    let g = store
        .insert_governorate("القاهرة".into())
        .await
        .expect("insert governorate");
    let option = store
        .insert_shipping_option("شحن عادي".into())
        .await
        .expect("insert option");
    let option = store
        .set_shipping_rate(
            option.id,
            ShippingRate {
                governorate_id: g.id,
                governorate_name: String::new(),
                delivery_charge: d("45.00"),
                shipping_tax_percent: d("14.00"),
                total_due_tax_percent: d("1.00"),
            },
        )
        .await
        .expect("set rate");
    let product = store.product(p.id).await.unwrap().unwrap();
    Fixture {
        account: account_a,
        other,
        product,
        variant: v,
        variant_b: vb,
        warranty: w,
        governorate: g,
        option,
    }
}

pub(crate) fn line(f: &Fixture, v: &Variant, quantity: i64, with_warranty: bool) -> NewOrderLine {
    let profit = d("10.50");
    let sell_price = v.price + profit;
    let warranties = if with_warranty {
        let unit = round_money(f.warranty.admin_fee + sell_price * f.warranty.percent / d("100"));
        vec![LineWarranty {
            warranty_id: f.warranty.id,
            name: f.warranty.name.clone(),
            unit_price: unit,
            quantity,
            total: unit * Decimal::from(quantity),
            duration_days: f.warranty.duration_days,
            terms: f.warranty.terms.clone(),
        }]
    } else {
        Vec::new()
    };
    NewOrderLine {
        variant_id: v.id,
        product_id: v.product_id,
        title: f.product.title.clone(),
        variant_label: v.label.clone(),
        quantity,
        sell_price,
        profit,
        commission_on: true,
        warranties,
        supplier_id: f.product.supplier_id,
        supply_price: v.supply_price,
    }
}

pub(crate) fn totals(lines: &[NewOrderLine]) -> Totals {
    let products: Decimal = lines
        .iter()
        .map(|l| l.sell_price * Decimal::from(l.quantity))
        .sum();
    let warranties: Decimal = lines
        .iter()
        .flat_map(|l| l.warranties.iter().map(|w| w.total))
        .sum();
    let profit: Decimal = lines
        .iter()
        .map(|l| l.profit * Decimal::from(l.quantity))
        .sum();
    let delivery_charge = d("51.30");
    let income_tax = round_money(profit * d("4") / d("100"));
    Totals {
        products: round_money(products),
        warranties: round_money(warranties),
        delivery_charge,
        customer_total: round_money(products + warranties + delivery_charge),
        profit: round_money(profit),
        income_tax,
        net_profit: round_money(profit - income_tax),
        income_tax_percent: d("4.00"),
    }
}

pub(crate) fn new_order(
    f: &Fixture,
    account: AccountId,
    number: &str,
    lines: Vec<NewOrderLine>,
    created: i64,
) -> NewOrder {
    NewOrder {
        account_id: account,
        number: number.to_owned(),
        legacy_number: None,
        external_reference: None,
        status: OrderStatus::Pending,
        customer: Customer {
            name: "محمد أحمد".into(),
            phone: "01012345678".into(),
            second_phone: None,
            address: "١٢ شارع التحرير".into(),
            governorate_id: f.governorate.id,
            governorate_name: f.governorate.name.clone(),
        },
        shipping_option_id: f.option.id,
        shipping_option_name: f.option.name.clone(),
        store_name: None,
        store_link: None,
        note: None,
        totals: totals(&lines),
        lines,
        created_at: at(created),
        bill_month: Some(month(MONTH)),
        idempotency: None,
        events: Default::default(),
        priced_from: Vec::new(),
    }
}

/// `EG-` plus eight characters from `A-Z0-9`.
pub(crate) fn number(n: u32) -> String {
    format!("EG-T{n:07}")
}

pub(crate) async fn place(store: &dyn Store, order: NewOrder) -> Order {
    store.place_order(order).await.expect("place order")
}

pub(crate) fn change(order: OrderId, to: OrderStatus, when: i64) -> StatusChange {
    StatusChange {
        account_id: None,
        order_id: order,
        to,
        only_from: Vec::new(),
        reason: None,
        outcomes: Vec::new(),
        read_at: None,
        at: at(when),
        bill_month: None,
        events: Default::default(),
    }
}

pub(crate) async fn move_to(
    store: &dyn Store,
    order: OrderId,
    path: &[OrderStatus],
    from: i64,
) -> Order {
    let mut last = None;
    for (i, status) in path.iter().enumerate() {
        last = Some(
            store
                .change_order_status(change(order, *status, from + i as i64))
                .await
                .expect("status change"),
        );
    }
    last.expect("non-empty path")
}

pub(crate) async fn meter_ops(store: &dyn Store, account: AccountId) -> u64 {
    store
        .meter(account, &month(MONTH))
        .await
        .expect("meter")
        .order_operations
}

pub(crate) async fn all_orders(store: &dyn Store, account: AccountId) -> Page<Order> {
    store
        .orders(account, &OrderFilter::default(), page(1, 100))
        .await
        .expect("orders")
}

/// The claim of a request on `key` of `account` (token 1; [`another_request`] for others).
pub(crate) fn claim(account: AccountId, key: &str) -> IdempotencyClaim {
    IdempotencyClaim::new(
        IdempotencyScope::new(account, key.to_owned()),
        IdempotencyToken::new(1),
    )
}

/// The claim of another request on the same key: its own `token`.
pub(crate) fn another_request(c: &IdempotencyClaim, token: i64) -> IdempotencyClaim {
    IdempotencyClaim::new(c.scope.clone(), IdempotencyToken::new(token))
}

/// Order `n` (one piece of the fixture's first variant, at second `created`) placed under
/// `claim`.
pub(crate) fn order_under(f: &Fixture, claim: &IdempotencyClaim, n: u32, created: i64) -> NewOrder {
    let mut order = new_order(
        f,
        f.account.id,
        &number(n),
        vec![line(f, &f.variant, 1, false)],
        created,
    );
    order.idempotency = Some(claim.clone());
    order
}

/// `begin_idempotent` at `now` with a 24 h expiry and a 60 s staleness window.
pub(crate) async fn begin(
    store: &dyn Store,
    s: &IdempotencyClaim,
    fingerprint: &str,
    now: DateTime<Utc>,
) -> IdempotencyBegin {
    store
        .begin_idempotent(
            s,
            fingerprint,
            now,
            now - Duration::hours(24),
            now - Duration::seconds(60),
        )
        .await
        .expect("begin idempotent")
}

/// A hold cut-off far in the future: every delivered order is ready (nothing is held).
pub(crate) fn no_hold() -> DateTime<Utc> {
    at(100 * 365 * 86_400)
}

/// Gives `account` a ready balance of at least `amount`: an order earning twice `amount`
/// and 10.00 more, delivered. Returns the account's ready balance as the store reads it.
pub(crate) async fn earn(
    store: &dyn Store,
    f: &Fixture,
    account: AccountId,
    amount: Decimal,
    number: &str,
) -> Decimal {
    let mut l = line(f, &f.variant, 1, false);
    l.profit = amount * d("2") + d("10.00");
    l.sell_price = f.variant.price + l.profit;
    let order = place(store, new_order(f, account, number, vec![l], 1)).await;
    let path = [
        OrderStatus::Confirmed,
        OrderStatus::Shipped,
        OrderStatus::Delivered,
    ];
    move_to(store, order.id, &path, 2).await;
    ready(store, account).await
}

/// The ready balance of `account` (nothing held, see [`no_hold`]).
pub(crate) async fn ready(store: &dyn Store, account: AccountId) -> Decimal {
    let withdrawals = store.withdrawals(account).await.expect("withdrawals");
    store
        .wallet_totals(account, no_hold())
        .await
        .expect("wallet totals")
        .ready(crate::domain::earnings::Withdrawn::of(&withdrawals))
}

/// A withdrawal request of `amount` for `account`.
pub(crate) fn withdrawal(account: AccountId, amount: &str, notes: Option<&str>) -> NewWithdrawal {
    NewWithdrawal {
        account_id: account,
        amount: d(amount),
        supply_amount: d("0.01"),
        wallet_number: "01012345678".into(),
        wallet_description: "فودافون كاش".into(),
        notes: notes.map(str::to_owned),
    }
}

/// `delivered` of a line's `quantity` pieces delivered and the rest lost: every piece
/// counted, none back on the shelf.
pub fn delivered_of(delivered: i64, quantity: i64) -> LineOutcome {
    LineOutcome {
        delivered_quantity: Some(delivered),
        lost_quantity: quantity - delivered,
        ..LineOutcome::default()
    }
}
