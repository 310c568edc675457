//! The sandbox fixture (docs/sandbox.md): a demo platform with fixed keys, served by
//! `cargo run --example server` and used by the tests.

use chrono::Duration;
use rust_decimal::Decimal;

use crate::domain::fields::{DraftLine, OrderDraft};
use crate::domain::keys::KeySpec;
use crate::engine::Engine;
use crate::model::*;
use crate::operator::OperatorError;

mod demo_login;
mod quotes;

pub use demo_login::{DEMO_ACCOUNT_COOKIE, DemoLogin, account_pages};

/// The fixed demo keys: (plaintext, what it is).
pub const DEMO_KEYS: &[(&str, &str)] = &[
    (
        "sk_demo_marketer",
        "marketer A: catalog:read, orders:read, orders:write, wallet:read, webhooks:manage",
    ),
    ("sk_demo_marketer_b", "marketer B: the same five abilities"),
    ("sk_demo_catalog_only", "marketer A: catalog:read only"),
    (
        "sk_demo_expired",
        "marketer A: all four, expired yesterday (401)",
    ),
    ("sk_demo_revoked", "marketer A: all four, revoked (401)"),
    (
        "sk_demo_limited",
        "marketer A: all four, limit 5 requests per minute",
    ),
    (
        "sk_demo_supplier",
        "a supplier: quotes:read, quotes:write, statement:read, wallet:read, webhooks:manage",
    ),
    (
        "sk_demo_inactive",
        "a suspended marketer (403 account_inactive)",
    ),
    (
        "sk_demo_api_pending",
        "a marketer whose API access is pending (403 api_not_enabled)",
    ),
    (
        "sk_demo_bench",
        "marketer A: the same five as sk_demo_marketer, limit 1,000,000 per minute, for load runs",
    ),
    (
        "sk_demo_supplier_bench",
        "the supplier: the same five as sk_demo_supplier, limit 1,000,000 per minute, for load runs",
    ),
];

/// Ids of the seeded records that examples and tests refer to.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct Sandbox {
    /// Marketer A.
    pub marketer_a: AccountId,
    /// Marketer B.
    pub marketer_b: AccountId,
    /// The supplier.
    pub supplier: AccountId,
    /// The newcomer: an active marketer that never asked for API access and has no key, for
    /// trying the onboarding on the owner pages (`/account/`).
    pub newcomer: AccountId,
    /// Parent category.
    pub parent_category: CategoryId,
    /// Child category.
    pub child_category: CategoryId,
    /// The product with 3 variants and 2 warranties.
    pub featured_product: ProductId,
    /// Its variants (the last one has `available` 0).
    pub featured_variants: Vec<VariantId>,
    /// Its warranties.
    pub featured_warranties: Vec<WarrantyId>,
    /// A warranty of another product.
    pub foreign_warranty: WarrantyId,
    /// The stopped product.
    pub stopped_product: ProductId,
    /// A plain variant with plenty of stock.
    pub plain_variant: VariantId,
    /// Shipping option serving every governorate.
    pub standard_shipping: ShippingOptionId,
    /// Shipping option serving a few governorates only.
    pub express_shipping: ShippingOptionId,
    /// Cairo.
    pub cairo: GovernorateId,
    /// A governorate the express option does not serve (Aswan).
    pub aswan: GovernorateId,
    /// Marketer A's confirmed order (`DEMO-CONFIRMED`).
    pub confirmed_order: OrderId,
    /// Marketer A's delivered order inside its hold.
    pub held_order: OrderId,
    /// Marketer A's delivered order past its hold.
    pub ready_order: OrderId,
    /// Marketer A's legacy order (`DEMO-LEGACY`, number `100001`).
    pub legacy_order: OrderId,
    /// The supplier's quotes: pending, accepted, rejected (none when it owns no variant).
    pub supplier_quotes: Vec<QuoteId>,
}

fn money(text: &str) -> Decimal {
    text.parse().expect("sandbox amounts are valid")
}

const ALL_FOUR: [Ability; 4] = [
    Ability::CatalogRead,
    Ability::OrdersRead,
    Ability::OrdersWrite,
    Ability::WalletRead,
];

/// The demo marketers' main keys: the four, and webhook management.
const MARKETER_KEY: [Ability; 5] = [
    Ability::CatalogRead,
    Ability::OrdersRead,
    Ability::OrdersWrite,
    Ability::WalletRead,
    Ability::WebhooksManage,
];

/// The sandbox's settings: the defaults, with webhooks allowed to `http` and loopback
/// receivers (a receiver on `http://127.0.0.1` during development), nothing else private
/// ([`UrlPolicy::SANDBOX`](crate::webhooks::UrlPolicy::SANDBOX)), the test mode on
/// ([`Config::test_mode`](crate::config::Config::test_mode): `/api/v1/sandbox/` moves orders and
/// the clock), and an owner's request for API access approved at once
/// ([`Config::approve_api_requests`](crate::config::Config::approve_api_requests)).
pub fn config() -> crate::config::Config {
    crate::config::Config {
        webhook_urls: crate::webhooks::UrlPolicy::SANDBOX,
        test_mode: true,
        approve_api_requests: true,
        ..crate::config::Config::default()
    }
}

const PRODUCT_TITLES: [&str; 32] = [
    "سماعة بلوتوث لاسلكية",
    "شاحن سريع 20 وات",
    "كابل شحن تايب سي",
    "جراب موبايل شفاف",
    "باور بانك 10000",
    "ساعة ذكية رياضية",
    "حامل موبايل للعربية",
    "سماعة سلكية بمايك",
    "لمبة ليد ذكية",
    "ماوس لاسلكي",
    "كيبورد بلوتوث",
    "فلاشة 64 جيجا",
    "كارت ميموري 128 جيجا",
    "مروحة مكتب صغيرة",
    "ترابيزة لابتوب",
    "شنطة لابتوب",
    "سماعة رأس للألعاب",
    "ستاند موبايل للمكتب",
    "وصلة HDMI",
    "مشترك كهرباء 4 مخارج",
    "إسكرينة حماية زجاج",
    "قلم لمس",
    "ميكروفون للموبايل",
    "رينج لايت للتصوير",
    "حامل ثلاثي للكاميرا",
    "منبه ديجيتال",
    "ترمس قهوة",
    "خلاط يدوي",
    "مكواة بخار",
    "غلاية كهرباء",
    "ميزان مطبخ ديجيتال",
    "فرشاة أسنان كهربائية",
];

/// Seeds the sandbox unless the store already holds data (a database kept across restarts):
/// `Some` with the ids when it seeded, `None` when the store was not empty.
pub async fn seed_if_empty(engine: &Engine) -> Result<Option<Sandbox>, OperatorError> {
    let store = engine.store();
    let empty = store
        .governorates()
        .await
        .map_err(OperatorError::from)?
        .is_empty()
        && store
            .all_categories()
            .await
            .map_err(OperatorError::from)?
            .is_empty()
        && store
            .account(AccountId::new(1))
            .await
            .map_err(OperatorError::from)?
            .is_none();
    if empty {
        seed(engine).await.map(Some)
    } else {
        Ok(None)
    }
}

/// Seeds an empty store through the operator API and returns the ids it made.
pub async fn seed(engine: &Engine) -> Result<Sandbox, OperatorError> {
    let op = engine.operator();
    let now = engine.now();

    // Accounts.
    let account =
        |name: &str, email: &str, side: Side, state: AccountState, api_status: ApiStatus| {
            NewAccount {
                name: name.to_owned(),
                store_name: (side == Side::Marketer).then(|| format!("متجر {name}")),
                email: email.to_owned(),
                phone: "01000000000".to_owned(),
                side,
                state,
                api_status,
            }
        };
    let a = op
        .create_account(account(
            "أحمد",
            "ahmed@example.com",
            Side::Marketer,
            AccountState::Active,
            ApiStatus::Approved,
        ))
        .await?;
    let b = op
        .create_account(account(
            "منى",
            "mona@example.com",
            Side::Marketer,
            AccountState::Active,
            ApiStatus::Approved,
        ))
        .await?;
    let supplier = op
        .create_account(account(
            "مصنع النور",
            "supplier@example.com",
            Side::Supplier,
            AccountState::Active,
            ApiStatus::Approved,
        ))
        .await?;
    let suspended = op
        .create_account(account(
            "حساب موقوف",
            "suspended@example.com",
            Side::Marketer,
            AccountState::Suspended,
            ApiStatus::Approved,
        ))
        .await?;
    let pending = op
        .create_account(account(
            "حساب مستني",
            "pending@example.com",
            Side::Marketer,
            AccountState::Active,
            ApiStatus::Pending,
        ))
        .await?;

    let newcomer = op
        .create_account(account(
            "سارة (حساب تجريبي جديد)",
            "newcomer@example.com",
            Side::Marketer,
            AccountState::Active,
            ApiStatus::None,
        ))
        .await?;

    // Keys.
    let spec = |name: &str,
                abilities: &[Ability],
                expires_in: Option<Duration>,
                rate_limit: Option<u32>| KeySpec {
        name: name.to_owned(),
        abilities: abilities.to_vec(),
        expires_at: expires_in.map(|d| now + d),
        rate_limit,
    };
    op.store_key(
        a.id,
        "sk_demo_marketer",
        spec("متجري", &MARKETER_KEY, None, None),
    )
    .await?;
    op.store_key(
        b.id,
        "sk_demo_marketer_b",
        spec("متجر منى", &MARKETER_KEY, None, None),
    )
    .await?;
    op.store_key(
        a.id,
        "sk_demo_catalog_only",
        spec("كتالوج بس", &[Ability::CatalogRead], None, None),
    )
    .await?;
    op.store_key(
        a.id,
        "sk_demo_expired",
        spec("منتهي", &ALL_FOUR, Some(Duration::days(-1)), None),
    )
    .await?;
    let revoked = op
        .store_key(a.id, "sk_demo_revoked", spec("ملغي", &ALL_FOUR, None, None))
        .await?;
    op.revoke_key(revoked.id).await?;
    op.store_key(
        a.id,
        "sk_demo_limited",
        spec("محدود", &ALL_FOUR, None, Some(5)),
    )
    .await?;
    let supplier_abilities = [
        Ability::QuotesRead,
        Ability::QuotesWrite,
        Ability::StatementRead,
        Ability::WalletRead,
        Ability::WebhooksManage,
    ];
    op.store_key(
        supplier.id,
        "sk_demo_supplier",
        spec("المورد", &supplier_abilities, None, None),
    )
    .await?;
    op.store_key(
        suspended.id,
        "sk_demo_inactive",
        spec("موقوف", &ALL_FOUR, None, None),
    )
    .await?;
    op.store_key(
        pending.id,
        "sk_demo_api_pending",
        spec("مستني", &ALL_FOUR, None, None),
    )
    .await?;
    op.store_key(
        a.id,
        "sk_demo_bench",
        spec("قياس الأداء", &MARKETER_KEY, None, Some(1_000_000)),
    )
    .await?;
    op.store_key(
        supplier.id,
        "sk_demo_supplier_bench",
        spec(
            "قياس أداء المورد",
            &supplier_abilities,
            None,
            Some(1_000_000),
        ),
    )
    .await?;

    // Catalogue.
    let parent = op
        .create_category(NewCategory {
            name: "إلكترونيات".into(),
            slug: "electronics".into(),
            parent_id: None,
        })
        .await?;
    let child = op
        .create_category(NewCategory {
            name: "إكسسوارات موبايل".into(),
            slug: "mobile-accessories".into(),
            parent_id: Some(parent.id),
        })
        .await?;
    let home = op
        .create_category(NewCategory {
            name: "أدوات منزلية".into(),
            slug: "home".into(),
            parent_id: None,
        })
        .await?;

    let mut product_ids = Vec::new();
    let mut first_variants = Vec::new();
    for (index, title) in PRODUCT_TITLES.iter().enumerate() {
        let category = match index {
            0..=9 => child.id,
            10..=24 => parent.id,
            _ => home.id,
        };
        let product = op
            .create_product(NewProduct {
                title: (*title).to_owned(),
                slug: format!("product-{}", index + 1),
                category_id: category,
                description: format!("{title}: جودة عالية وضمان من المنصة."),
                images: vec![format!(
                    "https://cdn.example.com/products/{}/1.jpg",
                    index + 1
                )],
                files: Vec::new(),
                video_url: None,
                marketing_files_url: Some(format!(
                    "https://cdn.example.com/products/{}/marketing.zip",
                    index + 1
                )),
                url: format!("https://shop.example.com/products/product-{}", index + 1),
                // The demo supplier's goods: the featured product and the next one.
                supplier_id: (index < 2).then_some(supplier.id),
            })
            .await?;
        let base = Decimal::from(50 + 15 * index as i64);
        let supplied = |price: Decimal| {
            if index < 2 {
                price - Decimal::from(30)
            } else {
                Decimal::ZERO
            }
        };
        let variant = op
            .add_variant(
                product.id,
                NewVariant {
                    label: "اللون الأساسي".into(),
                    price: base,
                    suggested_min: base + Decimal::from(20),
                    suggested_max: base + Decimal::from(60),
                    available: 500,
                    supply_price: supplied(base),
                },
            )
            .await?;
        product_ids.push(product.id);
        first_variants.push(variant.id);
    }
    let featured = product_ids[0];
    let mut featured_variants = vec![first_variants[0]];
    for (label, price, available) in [("أبيض", "260.00", 40), ("أحمر", "275.50", 0)] {
        let variant = op
            .add_variant(
                featured,
                NewVariant {
                    label: label.into(),
                    price: money(price),
                    suggested_min: money(price) + Decimal::from(40),
                    suggested_max: money(price) + Decimal::from(120),
                    available,
                    supply_price: money(price) - Decimal::from(60),
                },
            )
            .await?;
        featured_variants.push(variant.id);
    }
    op.update_variant(
        first_variants[0],
        VariantPatch {
            price: Some(money("249.99")),
            suggested_min: Some(money("289.99")),
            suggested_max: Some(money("369.99")),
            supply_price: Some(money("180.00")),
            ..VariantPatch::default()
        },
    )
    .await?;
    let mut featured_warranties = Vec::new();
    for (name, fee, percent, days) in [
        ("ضمان 6 شهور", "15.00", "5", 180),
        ("ضمان سنة", "25.00", "8.5", 365),
    ] {
        let warranty = op
            .add_warranty(
                featured,
                NewWarranty {
                    name: name.into(),
                    admin_fee: money(fee),
                    percent: money(percent),
                    price_from: money(fee),
                    duration_days: days,
                    terms: "الضمان بيغطي عيوب الصناعة.\nمش بيغطي الكسر أو سوء الاستخدام.".into(),
                    icon_url: None,
                },
            )
            .await?;
        featured_warranties.push(warranty.id);
    }
    let foreign = op
        .add_warranty(
            product_ids[1],
            NewWarranty {
                name: "ضمان الشاحن".into(),
                admin_fee: money("5.00"),
                percent: money("2"),
                price_from: money("5.00"),
                duration_days: 90,
                terms: "ضمان استبدال خلال 90 يوم.".into(),
                icon_url: None,
            },
        )
        .await?;
    let stopped = op
        .create_product(NewProduct {
            title: "منتج متوقف".into(),
            slug: "stopped-product".into(),
            category_id: home.id,
            description: "المنتج ده وقف بيعه.".into(),
            images: Vec::new(),
            files: Vec::new(),
            video_url: None,
            marketing_files_url: None,
            url: "https://shop.example.com/products/stopped-product".into(),
            supplier_id: None,
        })
        .await?;
    op.add_variant(
        stopped.id,
        NewVariant {
            label: "واحد".into(),
            price: money("99.00"),
            suggested_min: money("120.00"),
            suggested_max: money("150.00"),
            available: 10,
            supply_price: Decimal::ZERO,
        },
    )
    .await?;
    op.set_product_active(stopped.id, false).await?;

    // Shipping.
    let mut governorates = Vec::new();
    for name in crate::governorates::EGYPT {
        let governorate = op.create_governorate(name.arabic).await?;
        governorates.push((name.english.to_owned(), governorate.id));
    }
    let id_of = |english: &str| {
        governorates
            .iter()
            .find(|(e, _)| e == english)
            .map(|(_, id)| *id)
            .expect("every governorate of Egypt was just created")
    };
    let standard = op.create_shipping_option("شحن عادي").await?;
    for (index, (english, id)) in governorates.iter().enumerate() {
        let base = match english.as_str() {
            "Cairo" | "Giza" => money("45.00"),
            "Alexandria" | "Qalyubia" => money("55.00"),
            _ => money("65.00") + Decimal::from(index as i64 % 4 * 5),
        };
        let terms = RateTerms::charge(base)
            .shipping_tax_percent(money("14.00"))
            .total_due_tax_percent(money("1.00"));
        op.set_shipping_rate(standard.id, *id, terms).await?;
    }
    let express = op.create_shipping_option("شحن سريع").await?;
    for english in ["Cairo", "Giza", "Alexandria"] {
        let terms = RateTerms::charge(money("80.00"))
            .shipping_tax_percent(money("14.00"))
            .total_due_tax_percent(money("1.50"));
        op.set_shipping_rate(express.id, id_of(english), terms)
            .await?;
    }
    let cairo = id_of("Cairo");

    // Marketer A's orders.
    let draft =
        |reference: &str, variant: VariantId, quantity: i64, profit: &str, legacy: Option<&str>| {
            OrderDraft {
                external_reference: Some(reference.to_owned()),
                full_name: "محمد علي".into(),
                phone: "+201012345678".into(),
                second_phone: None,
                address: "15 شارع التحرير، الدقي".into(),
                governorate_id: cairo,
                shipping_option_id: standard.id,
                store_name: a.store_name.clone(),
                store_link: Some("https://ahmed-store.example.com".into()),
                note: None,
                lines: vec![DraftLine {
                    variant_id: variant,
                    quantity,
                    profit: money(profit),
                    warranty_ids: Vec::new(),
                }],
                legacy_number: legacy.map(str::to_owned),
            }
        };
    let days_ago = |d: i64| now - Duration::days(d);
    let legacy = op
        .import_order(
            a.id,
            draft("DEMO-LEGACY", first_variants[5], 1, "50.00", Some("100001")),
            days_ago(90),
        )
        .await?;
    op.move_order_at(legacy.id, OrderStatus::Confirmed, None, days_ago(89))
        .await?;
    op.move_order_at(legacy.id, OrderStatus::Shipped, None, days_ago(88))
        .await?;
    op.move_order_at(legacy.id, OrderStatus::Delivered, None, days_ago(86))
        .await?;

    let ready = op
        .import_order(
            a.id,
            // The demo supplier's goods (product 2): its statement's delivery entries.
            draft("DEMO-READY", first_variants[1], 2, "150.00", None),
            days_ago(30),
        )
        .await?;
    op.move_order_at(ready.id, OrderStatus::Confirmed, None, days_ago(29))
        .await?;
    op.move_order_at(ready.id, OrderStatus::Shipped, None, days_ago(28))
        .await?;
    op.move_order_at(ready.id, OrderStatus::Delivered, None, days_ago(20))
        .await?;

    let held = op
        .import_order(
            a.id,
            draft("DEMO-HELD", first_variants[1], 3, "40.00", None),
            days_ago(8),
        )
        .await?;
    op.move_order_at(held.id, OrderStatus::Confirmed, None, days_ago(7))
        .await?;
    op.move_order_at(held.id, OrderStatus::Shipped, None, days_ago(6))
        .await?;
    op.move_order_at(held.id, OrderStatus::Delivered, None, days_ago(3))
        .await?;

    let confirmed = op
        .import_order(
            a.id,
            draft("DEMO-CONFIRMED", featured_variants[0], 1, "60.00", None),
            days_ago(1),
        )
        .await?;
    op.move_order_at(
        confirmed.id,
        OrderStatus::Confirmed,
        None,
        now - Duration::hours(20),
    )
    .await?;

    // One paid withdrawal, so that `received` and `ready` show real figures.
    let withdrawal = op
        .request_withdrawal(NewWithdrawal {
            account_id: a.id,
            amount: money("200.00"),
            supply_amount: money("0.00"),
            wallet_number: "01012345678".into(),
            wallet_description: "فودافون كاش".into(),
            notes: None,
        })
        .await?;
    op.complete_withdrawal(withdrawal.id, "TRX-DEMO-1".into(), None)
        .await?;
    let busy: Vec<VariantId> = featured_variants
        .iter()
        .copied()
        .chain([first_variants[2]])
        .collect();
    let supplier_quotes = quotes::seed(engine, supplier.id, &busy).await?;

    Ok(Sandbox {
        marketer_a: a.id,
        marketer_b: b.id,
        supplier: supplier.id,
        newcomer: newcomer.id,
        parent_category: parent.id,
        child_category: child.id,
        featured_product: featured,
        featured_variants,
        featured_warranties,
        foreign_warranty: foreign.id,
        stopped_product: stopped.id,
        plain_variant: first_variants[2],
        standard_shipping: standard.id,
        express_shipping: express.id,
        cairo,
        aswan: id_of("Aswan"),
        confirmed_order: confirmed.id,
        held_order: held.id,
        ready_order: ready.id,
        legacy_order: legacy.id,
        supplier_quotes,
    })
}
