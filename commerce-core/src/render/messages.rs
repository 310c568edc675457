//! The message catalogue: every text a client can read, in Egyptian Arabic.
//!
//! Nothing else in the crate writes a client-facing sentence; codes stay English and stable.

use rust_decimal::Decimal;

use crate::model::{Ability, ApiStatus, OrderStatus, Problem, QuoteStatus, WithdrawalStatus};

/// 401 `unauthenticated`.
pub const UNAUTHENTICATED: &str = "مفتاح الربط مش موجود أو غلط أو اتلغى أو انتهت صلاحيته.";
/// 403 `account_inactive`.
pub const ACCOUNT_INACTIVE: &str =
    "الحساب ده موقوف أو متمسح أو لسه مكملش بياناته، فمينفعش يستخدم الربط.";
/// 403 `wrong_side`.
pub const WRONG_SIDE: &str = "الطلب ده مش متاح لنوع حسابك.";
/// 403 `api_not_enabled`.
pub const API_NOT_ENABLED: &str =
    "الربط مش مفعّل على حسابك. اطلب التفعيل من صفحة مفاتيح الربط واستنى موافقة الفريق.";
/// 403 `forbidden_ability`.
pub const FORBIDDEN_ABILITY: &str = "المفتاح ده معندوش الصلاحية المطلوبة للطلب ده.";
/// 404 `not_found` for a record.
pub const NOT_FOUND: &str = "اللي بتدور عليه مش موجود.";
/// 404 `not_found` for an unknown path.
pub const ROUTE_NOT_FOUND: &str = "المسار ده مش موجود.";
/// 405 `method_not_allowed`.
pub const METHOD_NOT_ALLOWED: &str = "الطريقة دي مش مسموحة على المسار ده.";
/// 413 `payload_too_large`, when the limit is not known ([`payload_too_large`] names it).
pub const PAYLOAD_TOO_LARGE: &str = "حجم الطلب أكبر من المسموح.";

/// 413 `payload_too_large` for a body limit of `limit` bytes ([`Config::body_limit`]
/// (crate::config::Config::body_limit) or [`Config::order_body_limit`](crate::config::Config::order_body_limit)): in megabytes, kilobytes or bytes, whichever is whole.
pub fn payload_too_large(limit: usize) -> String {
    const MIB: usize = 1024 * 1024;
    let size = match limit {
        0 => "0 بايت".to_owned(),
        l if l % MIB == 0 => format!("{} ميجابايت", l / MIB),
        l if l % 1024 == 0 => format!("{} كيلوبايت", l / 1024),
        l => format!("{l} بايت"),
    };
    format!("حجم الطلب أكبر من المسموح ({size} بحد أقصى).")
}
/// 400 `bad_request`: the body could not be read.
pub const BODY_UNREADABLE: &str = "محتوى الطلب وصل ناقص أو بترميز مش سليم، ومقدرناش نقراه.";
/// 408 `request_timeout`: the body was not read whole in time.
pub const BODY_TIMEOUT: &str = "محتوى الطلب اتأخر في الوصول أكتر من المسموح، ابعته تاني مرة واحدة.";
/// 410 `cursor_expired`: a change feed cursor older than the feed keeps.
pub const CURSOR_EXPIRED: &str =
    "المؤشر ده أقدم من 30 يوم ومبقاش صالح. اقرا الكتالوج من الأول وابدأ بمؤشر جديد.";
/// A change feed cursor (`after`) that is not one the feed gave.
pub const INVALID_CURSOR: &str = "المؤشر ده مش سليم، ابعته زي ما وصلك من غير تعديل.";
/// 422 `validation_failed`.
pub const VALIDATION_FAILED: &str = "في بيانات ناقصة أو مش مظبوطة، راجع الحقول.";
/// 429 `rate_limited`.
pub const RATE_LIMITED: &str = "عديت عدد الطلبات المسموح في الدقيقة، استنى شوية وجرب تاني.";
/// 500 `server_error`.
pub const SERVER_ERROR: &str = "حصلت مشكلة عندنا، جرب تاني بعد شوية.";
/// 409 for a repeated `external_reference`.
pub const DUPLICATE_EXTERNAL_REFERENCE: &str = "الأوردر ده متسجل قبل كده بنفس رقم الطلب بتاعك.";
/// An `Idempotency-Key` header that is not 1 to 100 printable ASCII characters.
pub const IDEMPOTENCY_KEY_FORM: &str = "مفتاح منع التكرار لازم يكون من 1 لـ 100 حرف ASCII مطبوع (حروف وأرقام ورموز، والمسافة مسموحة في النص).";
/// 409 for an `Idempotency-Key` reused with other data.
pub const IDEMPOTENCY_MISMATCH: &str = "مفتاح منع التكرار ده اتستخدم قبل كده مع بيانات مختلفة.";
/// 409 while the first request with the same `Idempotency-Key` is running.
pub const IDEMPOTENCY_IN_FLIGHT: &str =
    "في طلب بنفس مفتاح منع التكرار لسه بيتنفذ، استنى ثواني وجرب تاني.";
/// 409 when the ordered products changed twice while the order was being placed.
pub const CATALOGUE_CHANGED: &str =
    "أسعار أو بيانات المنتجات اتغيرت وإحنا بنسجل الأوردر، ومتسجلش حاجة. جرب تاني.";
/// 409 for an order that can no longer be cancelled.
pub const NOT_CANCELLABLE: &str = "الأوردر ده مبقاش ينفع يتلغي.";

/// A required field is missing.
pub const REQUIRED: &str = "الحقل ده مطلوب.";
/// Not an integer.
pub const MUST_BE_INTEGER: &str = "لازم يكون رقم صحيح.";
/// Not a string.
pub const MUST_BE_STRING: &str = "لازم يكون نص.";
/// Not an array.
pub const MUST_BE_ARRAY: &str = "لازم يكون قائمة.";
/// Not an object.
pub const MUST_BE_OBJECT: &str = "كل عنصر لازم يكون كائن فيه الحقول المطلوبة.";
/// Body is not a JSON object.
pub const INVALID_BODY: &str = "محتوى الطلب لازم يكون كائن JSON سليم.";
/// Not an Egyptian mobile number.
pub const INVALID_PHONE: &str = "رقم الموبايل لازم يكون مصري: يبدأ بـ 01 وبعده 9 أرقام.";
/// Not an http/https URL.
pub const INVALID_URL: &str = "لازم يكون رابط صحيح يبدأ بـ http أو https.";
/// Not a money amount.
pub const INVALID_MONEY: &str =
    "لازم يكون مبلغ من 0 لحد 1000000000، بأرقام بس وبحد أقصى رقمين بعد العلامة العشرية.";
/// Not a timestamp.
pub const INVALID_TIMESTAMP: &str =
    "لازم يكون تاريخ ووقت بصيغة ISO-8601، زي 2026-01-31T10:00:00+02:00.";
/// A query parameter that must be a calendar date (`from`, `to` of `GET /statement`).
pub const INVALID_DATE: &str = "لازم يكون تاريخ بصيغة YYYY-MM-DD، زي 2026-01-31.";
/// Unknown enumerated value.
pub const UNKNOWN_VALUE: &str = "القيمة دي مش من القيم المسموحة.";
/// A page of the owner pages asked for with a `page` that is not a whole number from 1.
pub const PAGE_NUMBER: &str = "رقم الصفحة لازم يكون رقم صحيح من 1 وطالع.";
/// A query parameter given with an empty value (`per_page=`).
pub const EMPTY_VALUE: &str = "لو بعت الخانة دي في الرابط لازم يكون ليها قيمة، أو شيلها خالص.";
/// A query parameter whose percent-decoded bytes are not UTF-8 (`q=%FF`).
pub const INVALID_ENCODING: &str = "القيمة دي مش مكتوبة بترميز UTF-8 سليم.";
/// An `Idempotency-Key` header sent more than once.
pub const IDEMPOTENCY_KEY_REPEATED: &str = "ابعت مفتاح منع التكرار مرة واحدة بس في الطلب.";
/// A single-line text with a control character (NUL, a line break, a tab, ...) or a hidden
/// bidirectional-override character.
pub const INVALID_CHARACTERS: &str =
    "لازم يكون نص عادي على سطر واحد، من غير رموز تحكم أو رموز مخفية بتغيّر اتجاه الكتابة.";
/// A multi-line text (`note`, `address`, `reason_note`) with a control character other than a
/// line break or a tab, or a hidden bidirectional-override character.
pub const INVALID_CHARACTERS_MULTILINE: &str =
    "لازم يكون نص عادي من غير رموز تحكم أو رموز مخفية بتغيّر اتجاه الكتابة (السطور الجديدة مسموحة).";
/// Lines count out of range.
pub const LINES_COUNT: &str = "الأوردر لازم يكون فيه من 1 لـ 100 سطر.";
/// Too many warranties on a line.
pub const TOO_MANY_WARRANTIES: &str = "مسموح بـ 10 ضمانات بحد أقصى للسطر الواحد.";
/// A warranty that is not the product's, or stopped.
pub const WARRANTY_NOT_AVAILABLE: &str = "الضمان ده مش تابع للمنتج أو متوقف.";
/// A variant that does not exist or is not sold.
pub const VARIANT_NOT_AVAILABLE: &str = "المنتج ده مش موجود أو مش متاح للبيع دلوقتي.";
/// A shipping option that does not exist.
pub const SHIPPING_OPTION_NOT_FOUND: &str = "نوع الشحن ده مش موجود.";
/// A governorate not served by the chosen option.
pub const GOVERNORATE_NOT_SERVED: &str = "المحافظة دي مش متاحة مع نوع الشحن اللي اخترته.";
/// A category that does not exist.
pub const CATEGORY_NOT_FOUND: &str = "القسم ده مش موجود.";

/// A string longer than allowed.
pub fn too_long(max: usize) -> String {
    format!("لازم ميزيدش عن {max} حرف.")
}

/// An integer outside a range.
pub fn integer_between(min: i64, max: i64) -> String {
    format!("لازم يكون رقم صحيح من {min} لـ {max}.")
}

/// A step of the sandbox's clock past its bound (10 years ahead in total); `room` is how many
/// seconds it may still move.
pub fn clock_too_far_ahead(room: i64) -> String {
    format!("ساعة الـ sandbox متقدرش تتقدم أكتر من 10 سنين في المجموع؛ الباقي {room} ثانية بس.")
}

/// A quantity above the stock.
pub fn insufficient_stock(available: i64) -> String {
    format!("الكمية المطلوبة أكبر من المتاح ({available} قطعة بس).")
}

/// A webhook URL that is not `https`.
pub const WEBHOOK_NOT_HTTPS: &str = "رابط الـ webhook لازم يبدأ بـ https.";

/// A webhook URL on a non-public address, or whose host name does not resolve: one message
/// for both, so that it cannot tell which internal names exist.
pub const WEBHOOK_NOT_PUBLIC: &str =
    "رابط الـ webhook لازم يوصل لعنوان عام على الإنترنت، مش عنوان داخلي أو محلي.";

/// An account at its limit of webhook endpoints.
pub const TOO_MANY_WEBHOOKS: &str =
    "وصلت للحد الأقصى: 10 روابط webhook للحساب الواحد. امسح رابط قديم الأول.";
/// 409 for a ping or redelivery to a disabled webhook endpoint.
pub const WEBHOOK_DISABLED: &str =
    "رابط الـ webhook ده متوقف. شغّله الأول (enabled: true) وبعدين جرب تاني.";
/// 409 for a ping or redelivery while 10 of them wait for the endpoint.
pub const WEBHOOK_BUSY: &str =
    "في 10 طلبات تجربة أو إعادة إرسال لسه مستنية تتبعت للرابط ده. استنى لما تخلص وجرب تاني.";

/// A field that must be `true` or `false`.
pub const MUST_BE_BOOLEAN: &str = "لازم يكون true أو false.";

/// The Arabic label of an order status.
pub fn status_label(status: OrderStatus) -> &'static str {
    match status {
        OrderStatus::Pending => "في انتظار التأكيد",
        OrderStatus::Confirmed => "العميل أكد الأوردر",
        OrderStatus::Preparing => "الأوردر بيتجهز",
        OrderStatus::Shipped => "الأوردر مع شركة الشحن",
        OrderStatus::Delivered => "اتسلم بالكامل",
        OrderStatus::PartiallyDelivered => "اتسلم جزء والباقي رجع",
        OrderStatus::Returned => "الأوردر رجع بالكامل",
        OrderStatus::RejectedByMarketer => "اتلغى من المسوّق",
        OrderStatus::RejectedByCustomer => "العميل رفض الأوردر",
        OrderStatus::Cancelled => "اتلغى من فريق المنصة",
        OrderStatus::Archived => "اتأرشف",
    }
}

/// The Arabic label of a withdrawal status.
pub fn withdrawal_status_label(status: WithdrawalStatus) -> &'static str {
    match status {
        WithdrawalStatus::Pending => "قيد المراجعة",
        WithdrawalStatus::Completed => "اتحوّل",
        WithdrawalStatus::Rejected => "اترفض",
    }
}

/// The Arabic label of an account's API access status.
pub fn api_status_label(status: ApiStatus) -> &'static str {
    match status {
        ApiStatus::None => "لسه ما اتطلبش",
        ApiStatus::Pending => "مستني موافقة فريق المنصة",
        ApiStatus::Approved => "شغال",
        ApiStatus::Rejected => "اترفض",
        ApiStatus::Suspended => "متوقف مؤقتًا",
        ApiStatus::Cancelled => "اتلغى",
    }
}

/// What an ability lets a key do, in Arabic.
pub fn ability_label(ability: Ability) -> &'static str {
    match ability {
        Ability::CatalogRead => "قراءة الأقسام والمنتجات والشحن",
        Ability::OrdersRead => "قراءة الأوردرات",
        Ability::OrdersWrite => "تسجيل الأوردرات وإلغاؤها",
        Ability::WalletRead => "قراءة المحفظة",
        Ability::QuotesRead => "قراءة عروض الأسعار",
        Ability::QuotesWrite => "تسجيل عروض الأسعار",
        Ability::StatementRead => "قراءة كشف الحساب",
        Ability::WebhooksManage => "إدارة روابط الـ webhook",
    }
}

/// The owner asked for an API access move its status does not allow.
pub fn api_status_move_refused(current: ApiStatus) -> String {
    format!(
        "مينفعش تعمل ده وحالة الربط دلوقتي «{}».",
        api_status_label(current)
    )
}

/// A key asked for before API access is approved.
pub const API_ACCESS_NOT_APPROVED: &str =
    "لازم فريق المنصة يوافق على الربط بالـ API الأول، وبعدين تقدر تعمل مفتاح.";

/// The owner asked for API access, a key or a withdrawal while the account is not active.
pub const OWNER_ACCOUNT_NOT_ACTIVE: &str = "حسابك مش شغال دلوقتي (موقوف أو متمسح أو لسه مكملش بياناته)، فمينفعش تطلب الربط أو مفاتيح أو سحب. كلّم فريق المنصة.";

/// The owner tried to lift (or end) a suspension of API access the platform's team made.
pub const API_SUSPENDED_BY_TEAM: &str =
    "فريق المنصة هو اللي وقف الربط على حسابك، وهو بس اللي يقدر يرجّعه. كلّم فريق المنصة.";

/// A key asked for while the account has as many live keys as it may.
pub fn key_limit(limit: usize) -> String {
    format!(
        "عندك {limit} مفتاح شغالين، وده الحد الأقصى. الغي مفتاح مش محتاجه الأول وبعدين اعمل واحد جديد."
    )
}

/// A withdrawal above the ready balance.
pub fn over_ready_balance(ready: Decimal) -> String {
    format!(
        "المبلغ أكبر من المتاح للسحب ({} جنيه).",
        crate::money::money_string(ready)
    )
}

/// A withdrawal requested outside the window.
pub fn withdrawal_window_closed(opens_at: &str) -> String {
    format!("السحب متاح يومي الأحد والخميس بس (بتوقيت القاهرة). أقرب يوم: {opens_at}.")
}

/// A page form whose CSRF token is missing or wrong.
pub const FORM_EXPIRED: &str =
    "الصفحة دي قديمة أو الطلب مش جاي منها. ارجع للصفحة وحدّثها وجرب تاني.";

/// A page asked for without a logged-in owner.
pub const NOT_LOGGED_IN: &str = "لازم تسجل دخول الأول.";

/// The note of the withdrawal window object.
pub const WITHDRAWAL_WINDOW_NOTE: &str =
    "طلبات السحب بتتعمل من صفحة المحفظة بس، يومي الأحد والخميس بتوقيت القاهرة.";

/// The textual price rule of a warranty.
pub fn warranty_price_rule(admin_fee: &str, percent: &str) -> String {
    format!("{admin_fee} جنيه + سعر البيع × {percent} / 100")
}

/// A sandbox move the order's status does not allow (409 `move_not_allowed`).
pub const MOVE_NOT_ALLOWED: &str = "حالة الأوردر الحالية مش بتسمح بالنقلة دي.";

/// A line outcome naming a line the order does not have.
pub const LINE_NOT_IN_ORDER: &str = "السطر ده مش من سطور الأوردر ده.";

/// An expiry that is not later than now.
pub const NOT_IN_FUTURE: &str = "لازم يكون تاريخ جاي، بعد النهارده.";

/// The same warranty twice on one line.
pub const DUPLICATE_WARRANTY: &str = "نفس الضمان متكرر في السطر ده.";

/// 409 `quote_pending`: the variant already has a quote awaiting a decision.
pub const QUOTE_PENDING: &str =
    "المنتج ده عليه عرض سعر لسه مستني قرار المنصة. استنى القرار أو اسحب العرض ده الأول.";
/// 409 `not_withdrawable`: the quote is no longer pending.
pub const NOT_WITHDRAWABLE: &str =
    "عرض السعر ده مبقاش ينفع يتسحب: اتقبل أو اترفض أو اتسحب قبل كده أو انتهت مدته.";
/// 409 `move_not_allowed` on a quote's decision (test mode): it is no longer pending.
pub const QUOTE_NOT_PENDING: &str = "عرض السعر ده مبقاش مستني قرار.";
/// 422 on a money amount that must be above zero (`unit_price` of a quote).
pub const MUST_BE_POSITIVE: &str = "لازم يكون أكبر من صفر.";
/// 422 on `variant_id` of a quote: not one of the supplier's variants.
pub const NOT_SUPPLIERS_VARIANT: &str = "المنتج ده مش من منتجاتك.";
/// 422 on `valid_until` of a quote: further ahead than allowed.
pub const VALID_UNTIL_TOO_FAR: &str = "آخر معاد للعرض لازم يكون خلال 90 يوم من دلوقتي.";

/// The Arabic label of a quote's status.
pub fn quote_status_label(status: QuoteStatus) -> &'static str {
    match status {
        QuoteStatus::Pending => "مستني قرار المنصة",
        QuoteStatus::Accepted => "اتقبل",
        QuoteStatus::Rejected => "اترفض",
        QuoteStatus::Withdrawn => "اتسحب",
        QuoteStatus::Expired => "انتهت مدته",
    }
}

/// A quote's `unit_price` above the most a quote may ask.
pub const QUOTE_PRICE_TOO_HIGH: &str = "سعر القطعة لازم يكون 1000000.00 جنيه أو أقل.";

/// Pieces received past the most a variant may hold.
pub const STOCK_ABOVE_MAXIMUM: &str = "الكمية دي هتعدّي أقصى مخزون مسموح للمنتج ده.";

/// Outcome counts sent with a move that does not settle the order.
pub const OUTCOMES_NOT_ACCEPTED: &str =
    "عدد القطع بيتسجل بس مع التسليم أو المرتجع أو أرشفتهم أو تصحيحهم.";

/// A correction that would take back pieces or money that are gone already (sold again,
/// withdrawn): said without naming whose, so that no side learns of another's money.
pub const CORRECTION_SHORTFALL: &str =
    "التصحيح ده مش ممكن دلوقتي: القطع أو الفلوس اللي هيرجعها خرجت خلاص.";

/// The message of a field problem, as the API shows it under the field.
pub fn problem(problem: Problem) -> String {
    match problem {
        Problem::Required => REQUIRED.into(),
        Problem::TooLong { max } => too_long(max),
        Problem::NotPrintable { multi_line: false } => INVALID_CHARACTERS.into(),
        Problem::NotPrintable { multi_line: true } => INVALID_CHARACTERS_MULTILINE.into(),
        Problem::InvalidPhone => INVALID_PHONE.into(),
        Problem::InvalidUrl => INVALID_URL.into(),
        Problem::NotHttps => WEBHOOK_NOT_HTTPS.into(),
        Problem::NotPublicAddress => WEBHOOK_NOT_PUBLIC.into(),
        Problem::UnknownValue => UNKNOWN_VALUE.into(),
        Problem::InvalidAmount => INVALID_MONEY.into(),
        Problem::OutOfRange { min, max } if max < i64::MAX => integer_between(min, max),
        Problem::OutOfRange { .. } => MUST_BE_INTEGER.into(),
        Problem::TooShort { min } => format!("لازم يكون {min} حروف على الأقل."),
        Problem::InvalidPercent => {
            "لازم تكون نسبة من 0 لـ 100، وبحد أقصى رقمين بعد العلامة العشرية.".into()
        }
        Problem::BelowMinimum { minimum } => {
            format!(
                "أقل من الحد الأدنى ({}).",
                crate::money::money_string(minimum)
            )
        }
        Problem::NotInFuture => NOT_IN_FUTURE.into(),
        Problem::TooFarAhead => VALID_UNTIL_TOO_FAR.into(),
        Problem::LineCount => LINES_COUNT.into(),
        Problem::TooManyWarranties => TOO_MANY_WARRANTIES.into(),
        Problem::ShippingOptionNotFound => SHIPPING_OPTION_NOT_FOUND.into(),
        Problem::GovernorateNotServed => GOVERNORATE_NOT_SERVED.into(),
        Problem::VariantNotAvailable => VARIANT_NOT_AVAILABLE.into(),
        Problem::DuplicateWarranty => DUPLICATE_WARRANTY.into(),
        Problem::WarrantyNotAvailable => WARRANTY_NOT_AVAILABLE.into(),
        Problem::InsufficientStock { available } => insufficient_stock(available),
        Problem::StockShortfall {
            available,
            shortfall,
        } => format!("المتاح {available} قطعة بس، ناقص {shortfall} قطعة."),
        Problem::NotASupplier => "الحساب ده مش حساب مورد.".into(),
        Problem::OutcomesNotAccepted => OUTCOMES_NOT_ACCEPTED.into(),
        Problem::DeliveredOnReturn => "الأوردر المرتجع مفيهوش قطع متسلمة.".into(),
        Problem::Uncounted { quantity } => {
            format!("لازم تقول إيه اللي حصل لكل القطع: مجموع الأعداد لازم يبقى {quantity}.")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::OrderStatus;

    #[test]
    fn every_status_has_an_arabic_label() {
        for status in OrderStatus::ALL {
            let label = status_label(*status);
            assert!(
                label
                    .chars()
                    .any(|c| ('\u{0600}'..='\u{06FF}').contains(&c)),
                "{status}"
            );
            assert!(!label.chars().any(|c| c.is_ascii_alphabetic()), "{status}");
        }
    }

    #[test]
    fn the_413_message_names_the_configured_limit() {
        assert!(payload_too_large(1024 * 1024).contains("(1 ميجابايت بحد أقصى)"));
        assert!(payload_too_large(3 * 1024 * 1024).contains("(3 ميجابايت"));
        assert!(payload_too_large(64 * 1024).contains("(64 كيلوبايت"));
        assert!(payload_too_large(1000).contains("(1000 بايت"));
    }
}
