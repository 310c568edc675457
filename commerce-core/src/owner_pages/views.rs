//! The pages' templates (maud: checked at compile time, every value escaped).

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::forms::{Errors, Form, cairo_day, cairo_minute};
use crate::domain::wallet::{WalletFigures, WithdrawalWindow};
use crate::limits::MAX_KEY_NAME;
use crate::model::{
    Ability, Account, ApiKey, ApiStatus, ChangedBy, KeyListing, PageRequest, Withdrawal,
};
use crate::money::money_string;
use crate::render::messages::{self, ability_label, api_status_label, withdrawal_status_label};

/// Readable on a phone, right to left, no external file.
const STYLE: &str = "\
*{box-sizing:border-box}\
body{margin:0;font-family:system-ui,'Noto Sans Arabic',Tahoma,sans-serif;line-height:1.6;background:#f5f6f8;color:#1d2330}\
header{background:#123c69;color:#fff;padding:.75rem 1rem}\
header a{color:#fff;margin-inline-end:1rem;text-decoration:none}\
header a[aria-current]{text-decoration:underline;font-weight:bold}\
main{max-width:46rem;margin:0 auto;padding:1rem}\
section{background:#fff;border-radius:.5rem;padding:1rem;margin-bottom:1rem;box-shadow:0 1px 2px #0002}\
h1{font-size:1.4rem;margin:.25rem 0 1rem}h2{font-size:1.1rem;margin:0 0 .75rem}\
label{display:block;font-weight:600;margin:.5rem 0 .25rem}\
input[type=text],input[type=date],input[type=tel],input[type=password]{width:100%;padding:.5rem;font-size:1rem;border:1px solid #99a;border-radius:.25rem}\
input.bad{border-color:#b00020}\
.check{font-weight:normal;display:flex;gap:.5rem;align-items:center}\
button{font-size:1rem;padding:.5rem 1rem;border:0;border-radius:.25rem;background:#123c69;color:#fff;cursor:pointer;margin-top:.75rem}\
button.danger{background:#b00020}\
.error{color:#b00020;margin:.25rem 0}\
.note{background:#eef4fb;border-inline-start:4px solid #123c69;padding:.5rem .75rem}\
.demo{background:#fff4ce;border:2px dashed #b07d00;padding:.5rem .75rem;font-weight:bold}\
.key{font-family:monospace;font-size:1.05rem;direction:ltr;text-align:left;user-select:all;word-break:break-all;background:#f0f0f0;padding:.75rem;border-radius:.25rem}\
pre{direction:ltr;text-align:left;white-space:pre-wrap;word-break:break-all;background:#f0f0f0;padding:.5rem}\
table{width:100%;border-collapse:collapse}th,td{text-align:start;padding:.4rem;border-bottom:1px solid #dde;vertical-align:top}\
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;margin:0}dt{font-weight:600}dd{margin:0}\
.ltr{direction:ltr;unicode-bidi:embed}\
@media (max-width:36rem){thead{display:none}tr{display:block;border-bottom:2px solid #dde;padding:.5rem 0}td{display:block;border:0;padding:.1rem 0}td[data-label]::before{content:attr(data-label) ': ';font-weight:600}}";

/// Which page the menu marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nav {
    Access,
    Keys,
    Wallet,
    None,
}

/// The frame of every page.
pub(crate) fn layout(
    base: &str,
    title: &str,
    nav: Nav,
    account: Option<&Account>,
    body: Markup,
) -> String {
    let link = |path: &str, label: &str, this: Nav| {
        let current = (nav == this).then_some("page");
        html! { a href=(format!("{base}{path}")) aria-current=[current] { (label) } }
    };
    html! {
        (DOCTYPE)
        html lang="ar" dir="rtl" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    nav aria-label="صفحات الحساب" {
                        (link("/", "الربط بالـ API", Nav::Access))
                        (link("/keys", "مفاتيح الربط", Nav::Keys))
                        (link("/wallet", "المحفظة", Nav::Wallet))
                    }
                    @if let Some(account) = account {
                        div { "الحساب: " (account.name) }
                    }
                }
                main { h1 { (title) } (body) }
            }
        }
    }
    .into_string()
}

/// The hidden CSRF field.
pub(crate) fn csrf_field(token: &str) -> Markup {
    html! { input type="hidden" name="csrf" value=(token); }
}

/// A field's errors, right under it.
fn field_errors(errors: &Errors, field: &str) -> Markup {
    html! {
        @for message in errors.of(field) {
            p.error id=(format!("{field}-error")) role="alert" { (message) }
        }
    }
}

fn general_error(errors: &Errors) -> Markup {
    html! { @if let Some(message) = &errors.general { p.error role="alert" { (message) } } }
}

/// A page with one message.
pub(crate) fn message_page(base: &str, message: &str) -> String {
    let body = html! { section { p { (message) } p { a href=(format!("{base}/")) { "ارجع لصفحة الحساب" } } } };
    layout(base, "الحساب", Nav::None, None, body)
}

/// A one-button form posting to `action`.
fn button_form(action: &str, token: &str, label: &str, danger: bool) -> Markup {
    html! {
        form method="post" action=(action) {
            (csrf_field(token))
            button class=[danger.then_some("danger")] type="submit" { (label) }
        }
    }
}

/// API access: the status and the moves the owner may make.
pub(crate) fn access_page(
    base: &str,
    account: &Account,
    token: &str,
    errors: &Errors,
    done: bool,
) -> String {
    let status = account.api_status;
    let body = html! {
        section {
            h2 { "حالة الربط" }
            p { "الحالة: " strong #api-status { (api_status_label(status)) } }
            (general_error(errors))
            @if done { p.note role="status" { "اتسجل طلبك." } }
            @if !account.is_active() {
                p.note #account-inactive { (messages::OWNER_ACCOUNT_NOT_ACTIVE) }
            }
            @match status {
                ApiStatus::Suspended if account.api_status_by == ChangedBy::Team => {
                    p.note #suspended-by-team { (messages::API_SUSPENDED_BY_TEAM) }
                }
                ApiStatus::None | ApiStatus::Rejected | ApiStatus::Cancelled | ApiStatus::Suspended => {
                    p { "اطلب تفعيل الربط بالـ API، وبعد موافقة فريق المنصة تقدر تعمل مفاتيح لمتجرك أو نظامك." }
                }
                ApiStatus::Pending => { p.note { "طلبك وصل لفريق المنصة. أول ما يوافقوا هتقدر تعمل مفاتيح." } }
                ApiStatus::Approved => {
                    p { "الربط شغال. اعمل مفتاح من " a href=(format!("{base}/keys")) { "صفحة المفاتيح" } " وسلّمه للمبرمج." }
                }
            }
            @if account.is_active() && account.owner_may_move_api_to(ApiStatus::Pending) {
                (button_form(&format!("{base}/access/request"), token, "اطلب تفعيل الربط", false))
            }
            @if account.owner_may_move_api_to(ApiStatus::Suspended) {
                (button_form(&format!("{base}/access/suspend"), token, "أوقف الربط مؤقتًا", true))
            }
            @if account.owner_may_move_api_to(ApiStatus::Cancelled) {
                (button_form(&format!("{base}/access/cancel"), token, "ألغِ الربط", true))
            }
        }
    };
    layout(base, "الربط بالـ API", Nav::Access, Some(account), body)
}

fn key_state(key: &ApiKey, now: chrono::DateTime<chrono::Utc>) -> &'static str {
    if key.revoked_at.is_some() {
        "ملغي"
    } else if !key.is_live(now) {
        "منتهي"
    } else {
        "شغال"
    }
}

/// What the keys page shows.
pub(crate) struct KeysView<'a> {
    pub(crate) account: &'a Account,
    /// One page of the keys, newest first.
    pub(crate) keys: &'a [KeyListing],
    /// Which page.
    pub(crate) page: PageRequest,
    /// The account's keys across the pages.
    pub(crate) total: u64,
    pub(crate) now: chrono::DateTime<chrono::Utc>,
    pub(crate) token: &'a str,
    pub(crate) form: &'a Form,
    pub(crate) errors: &'a Errors,
    pub(crate) revoked: bool,
}

/// Keys: the list and the form of a new one.
pub(crate) fn keys_page(base: &str, v: &KeysView<'_>) -> String {
    let allowed = Ability::for_side(v.account.side);
    let checked: Vec<&str> = v.form.all("abilities");
    let approved = v.account.api_status == ApiStatus::Approved;
    let pages = v.total.div_ceil(u64::from(v.page.per_page())).max(1);
    let page = u64::from(v.page.page());
    let body = html! {
        @if v.revoked { p.note role="status" { "المفتاح اتلغى." } }
        section {
            h2 { "المفاتيح" }
            p { "الأحدث الأول. الحد الأقصى " (crate::limits::MAX_LIVE_KEYS) " مفتاح شغالين في نفس الوقت؛ الملغية والمنتهية مش بتتحسب." }
            @if v.total == 0 {
                p { "لسه معملتش مفاتيح." }
            } @else if v.keys.is_empty() {
                p { "مفيش مفاتيح في الصفحة دي. " a href=(format!("{base}/keys")) { "ارجع لأول صفحة" } }
            } @else {
                table {
                    thead { tr { th { "الاسم" } th { "الصلاحيات" } th { "ينتهي" } th { "الحالة" } th { "اتعمل" } th { "آخر استخدام" } th {} } }
                    tbody {
                        @for listing in v.keys {
                            @let key = &listing.key;
                            tr {
                                td data-label="الاسم" { (key.name) }
                                td data-label="الصلاحيات" {
                                    @for ability in &key.abilities { span.ltr { (ability.as_str()) } " " }
                                }
                                td data-label="ينتهي" { @match key.expires_at { Some(at) => span.ltr { (cairo_minute(at)) }, None => "من غير انتهاء" } }
                                td data-label="الحالة" { (key_state(key, v.now)) }
                                td data-label="اتعمل" { span.ltr { (cairo_minute(key.created_at)) } }
                                td data-label="آخر استخدام" { @match listing.last_used_at { Some(at) => span.ltr { (cairo_minute(at)) }, None => "لسه ما استخدمش" } }
                                td {
                                    @if key.revoked_at.is_none() {
                                        form method="post" action=(format!("{base}/keys/{}/revoke", key.id)) {
                                            (csrf_field(v.token))
                                            button.danger type="submit" aria-label=(format!("ألغِ المفتاح {}", key.name)) { "ألغِ" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if pages > 1 {
                nav aria-label="صفحات المفاتيح" {
                    @if page > 1 {
                        a #keys-newer href=(format!("{base}/keys?page={}", page - 1)) { "الأحدث" } " "
                    }
                    span #keys-page { "صفحة " (page) " من " (pages) }
                    @if page < pages {
                        " " a #keys-older href=(format!("{base}/keys?page={}", page + 1)) { "الأقدم" }
                    }
                }
            }
        }
        section {
            h2 { "مفتاح جديد" }
            @if !v.account.is_active() {
                p.note { (messages::OWNER_ACCOUNT_NOT_ACTIVE) }
            } @else if !approved {
                p.note { (messages::API_ACCESS_NOT_APPROVED) " " a href=(format!("{base}/")) { "صفحة الربط" } }
            } @else {
                form method="post" action=(format!("{base}/keys")) {
                    (csrf_field(v.token))
                    (general_error(v.errors))
                    label for="name" { "اسم المفتاح (عشان تعرفه بعدين)" }
                    input #name type="text" name="name" value=(v.form.text("name")) maxlength=(MAX_KEY_NAME) required
                        class=[(!v.errors.of("name").is_empty()).then_some("bad")];
                    (field_errors(v.errors, "name"))
                    fieldset {
                        legend { "الصلاحيات" }
                        @for ability in allowed {
                            label.check {
                                input type="checkbox" name="abilities" value=(ability.as_str()) checked[checked.contains(&ability.as_str())];
                                span.ltr { (ability.as_str()) } " — " (ability_label(*ability))
                            }
                        }
                        (field_errors(v.errors, "abilities"))
                    }
                    label for="expires_at" { "آخر يوم يشتغل فيه المفتاح (اختياري، بتوقيت القاهرة)" }
                    input #expires_at type="date" dir="ltr" name="expires_at" value=(v.form.text("expires_at"))
                        class=[(!v.errors.of("expires_at").is_empty()).then_some("bad")];
                    (field_errors(v.errors, "expires_at"))
                    button type="submit" { "اعمل المفتاح" }
                }
            }
        }
    };
    layout(base, "مفاتيح الربط", Nav::Keys, Some(v.account), body)
}

/// The new key, shown this once.
pub(crate) fn key_created_page(
    base: &str,
    account: &Account,
    key: &ApiKey,
    plaintext: &str,
    api_url: &str,
) -> String {
    let curl = format!("curl -s {api_url}/me -H 'Authorization: Bearer {plaintext}'");
    let body = html! {
        section {
            h2 { "المفتاح «" (key.name) "» اتعمل" }
            p.note { "انسخ المفتاح دلوقتي وسلّمه للمبرمج: مش هيظهر تاني، ولو ضاع اعمل واحد جديد والغي القديم." }
            p.key #new-key { (plaintext) }
            p { "أول طلب تجربة:" }
            pre { (curl) }
            p { "لو رجع بيانات حسابك يبقى الربط شغال." }
            p { a href=(format!("{base}/keys")) { "ارجع للمفاتيح" } }
        }
    };
    layout(base, "مفتاح جديد", Nav::Keys, Some(account), body)
}

/// What the wallet page shows.
pub(crate) struct WalletView<'a> {
    pub(crate) account: &'a Account,
    pub(crate) figures: &'a WalletFigures,
    pub(crate) window: WithdrawalWindow,
    pub(crate) minimum: rust_decimal::Decimal,
    pub(crate) withdrawals: &'a [Withdrawal],
    pub(crate) token: &'a str,
    pub(crate) form: &'a Form,
    pub(crate) errors: &'a Errors,
    pub(crate) done: bool,
}

/// The wallet: figures, the withdrawal form, the withdrawals.
pub(crate) fn wallet_page(base: &str, v: &WalletView<'_>) -> String {
    let f = v.figures;
    let egp = |amount| format!("{} جنيه", money_string(amount));
    let body = html! {
        @if v.done { p.note role="status" { "طلب السحب اتسجل وهيتراجع." } }
        section {
            h2 { "الرصيد" }
            dl {
                dt { "متاح للسحب" } dd #ready { (egp(f.ready)) }
                dt { "في فترة الضمان" } dd { (egp(f.held))
                    @if let Some(at) = f.next_ready_at { " (أقرب مبلغ يبقى متاح " span.ltr { (cairo_day(at)) } ")" } }
                dt { "متوقع" } dd { (egp(f.expected)) }
                dt { "طلبات سحب قيد المراجعة" } dd { (egp(f.pending_amount)) }
                dt { "اتحوّل لك" } dd { (egp(f.received)) }
                dt { "عمولة المنصة" } dd { (egp(f.total_commission)) }
            }
        }
        section {
            h2 { "طلب سحب" }
            p { (messages::WITHDRAWAL_WINDOW_NOTE) " الحد الأدنى " (egp(v.minimum)) "." }
            (general_error(v.errors))
            @if !v.account.is_active() {
                p.note { (messages::OWNER_ACCOUNT_NOT_ACTIVE) }
            } @else if v.window.open {
                form method="post" action=(format!("{base}/wallet/withdrawals")) {
                    (csrf_field(v.token))
                    label for="amount" { "المبلغ (جنيه)" }
                    input #amount type="text" inputmode="decimal" dir="ltr" name="amount" value=(v.form.text("amount")) required
                        class=[(!v.errors.of("amount").is_empty()).then_some("bad")];
                    (field_errors(v.errors, "amount"))
                    label for="wallet_number" { "رقم المحفظة (موبايل)" }
                    input #wallet_number type="tel" dir="ltr" name="wallet_number" value=(v.form.text("wallet_number")) required
                        class=[(!v.errors.of("wallet_number").is_empty()).then_some("bad")];
                    (field_errors(v.errors, "wallet_number"))
                    label for="wallet_description" { "نوع المحفظة (مثلًا فودافون كاش)" }
                    input #wallet_description type="text" name="wallet_description" value=(v.form.text("wallet_description")) required
                        class=[(!v.errors.of("wallet_description").is_empty()).then_some("bad")];
                    (field_errors(v.errors, "wallet_description"))
                    button type="submit" { "اطلب السحب" }
                }
            } @else {
                p.note { "السحب مقفول النهارده. أقرب يوم: " span.ltr { (cairo_day(v.window.opens_at)) } "." }
            }
        }
        section {
            h2 { "طلبات السحب" }
            @if v.withdrawals.is_empty() {
                p { "مفيش طلبات سحب لسه." }
            } @else {
                table {
                    thead { tr { th { "التاريخ" } th { "المبلغ" } th { "المحفظة" } th { "الحالة" } th { "رقم التحويل" } } }
                    tbody {
                        @for w in v.withdrawals {
                            tr {
                                td data-label="التاريخ" { span.ltr { (cairo_minute(w.created_at)) } }
                                td data-label="المبلغ" { (egp(w.amount)) }
                                td data-label="المحفظة" { span.ltr { (w.wallet_number) } " " (w.wallet_description) }
                                td data-label="الحالة" { (withdrawal_status_label(w.status)) }
                                td data-label="رقم التحويل" { @if let Some(reference) = &w.transfer_reference { (reference) } }
                            }
                        }
                    }
                }
            }
        }
    };
    layout(base, "المحفظة", Nav::Wallet, Some(v.account), body)
}
