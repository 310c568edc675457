//! The owner pages (`owner_pages`): every page and form through the framework-neutral
//! handler with the sandbox's demo login, on the harness's store.

use http::StatusCode;

use super::Harness;
use super::pages_client::Browser;
use crate::model::*;
use crate::render::messages;

/// The onboarding of the specification, on the pages: log in as the newcomer, request API
/// access (the sandbox approves at once), create a key with `catalog:read`, shown once on a
/// `no-store` page, and `GET /api/v1/me` with it answers 200; the list then shows the key's
/// name and the minute it was used, never the key.
pub async fn owner_pages_onboarding_from_login_to_me(h: &Harness) {
    Browser::new(h).onboard(h).await;
}

impl Browser {
    /// The onboarding of [`owner_pages_onboarding_from_login_to_me`] through this browser
    /// (an adapter's mount, for the adapters' own tests).
    pub async fn onboard(&self, h: &Harness) {
        let browser = self;
        let refused = browser.get("/").await;
        assert_eq!(refused.status, StatusCode::SEE_OTHER);
        assert_eq!(refused.header("location"), Some("/account/login"));
        let login = browser.get("/login").await;
        assert_eq!(login.status, StatusCode::OK);
        assert!(
            login.body.contains("<html lang=\"ar\" dir=\"rtl\">"),
            "{}",
            login.body
        );
        assert!(
            login.body.contains("دخول تجريبي"),
            "the demo login says it is a demo"
        );
        browser.log_in(h.fixture.newcomer).await;

        let access = browser.get("/").await;
        assert_eq!(access.status, StatusCode::OK);
        assert_eq!(
            access.text_of("api-status"),
            messages::api_status_label(ApiStatus::None)
        );
        assert!(access.body.contains("/account/access/request"));
        let keys = browser.get("/keys").await;
        assert!(
            keys.body.contains(messages::API_ACCESS_NOT_APPROVED),
            "no key before approval"
        );

        let moved = browser.submit("/", "/access/request", &[]).await;
        assert_eq!(moved.status, StatusCode::SEE_OTHER);
        assert_eq!(moved.header("location"), Some("/account/?done=1"));
        let access = browser.get("/?done=1").await;
        assert_eq!(
            access.text_of("api-status"),
            messages::api_status_label(ApiStatus::Approved)
        );

        // The key-name field allows what the rule allows, no more.
        let form = browser.get("/keys").await;
        let maxlength = format!(
            "id=\"name\" type=\"text\" name=\"name\" value=\"\" maxlength=\"{}\"",
            crate::limits::MAX_KEY_NAME
        );
        assert!(form.body.contains(&maxlength), "{}", form.body);

        let created = browser
            .submit(
                "/keys",
                "/keys",
                &[("name", "متجري على شوبيفاي"), ("abilities", "catalog:read")],
            )
            .await;
        assert_eq!(created.status, StatusCode::OK, "{}", created.body);
        assert_eq!(created.header("cache-control"), Some("no-store"));
        let key = created.text_of("new-key");
        // The sandbox's engine (test mode) makes test keys, never live-looking ones.
        let prefix = if h.engine.config().test_mode {
            crate::TEST_KEY_PREFIX
        } else {
            crate::KEY_PREFIX
        };
        assert!(key.starts_with(prefix), "{key}");
        assert!(created.body.contains("/api/v1/me"));

        let me = h.get(&key, "/api/v1/me").await;
        assert_eq!(me.status, 200, "{:?}", me.body);
        assert_eq!(me.json()["data"]["id"], h.fixture.newcomer.get());
        let products = h.get(&key, "/api/v1/products").await;
        assert_eq!(products.status, 200);
        let orders = h.get(&key, "/api/v1/orders").await;
        orders.assert_error(403, "forbidden_ability");

        let list = browser.get("/keys").await;
        assert_eq!(list.status, StatusCode::OK);
        assert!(list.body.contains("متجري على شوبيفاي"));
        assert!(!list.body.contains(&key), "the key is shown once only");
        assert_ne!(list.header("cache-control"), None);
        let listed = h
            .engine
            .owner(h.fixture.newcomer)
            .keys()
            .await
            .expect("keys");
        assert_eq!(listed.len(), 1);
        let minute = h.clock.now_utc().timestamp() / 60 * 60;
        assert_eq!(listed[0].last_used_at.map(|t| t.timestamp()), Some(minute));
        assert!(list.body.contains(&crate::owner_pages::forms::cairo_minute(
            listed[0].last_used_at.expect("used")
        )));
    }
}

/// Every POST needs the CSRF token of its own cookie and account: none, a wrong one, and
/// another account's are 403 and change nothing; a visitor not logged in is sent to log in.
pub async fn owner_pages_refuse_forms_without_their_csrf_token(h: &Harness) {
    let browser = Browser::new(h);
    browser.log_in(h.fixture.marketer_a).await;
    let before = h
        .engine
        .owner(h.fixture.marketer_a)
        .keys()
        .await
        .expect("keys")
        .len();
    let fields = [("name", "مفتاح"), ("abilities", "catalog:read")];
    let none = browser.post_raw("/keys", &fields).await;
    assert_eq!(none.status, StatusCode::FORBIDDEN);
    assert!(none.body.contains(messages::FORM_EXPIRED));
    let wrong = browser
        .post_raw("/keys", &[("csrf", "AAAA"), ("name", "مفتاح")])
        .await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN);
    // A token of the same cookie for another account (the demo login's, account 0).
    let login_token = browser.get("/login").await.csrf();
    let other = browser
        .post_raw(
            "/keys",
            &[
                ("csrf", login_token.as_str()),
                ("name", "مفتاح"),
                ("abilities", "catalog:read"),
            ],
        )
        .await;
    assert_eq!(other.status, StatusCode::FORBIDDEN);
    // A token from another browser (another cookie).
    let stranger = Browser::new(h);
    stranger.log_in(h.fixture.marketer_a).await;
    let foreign = stranger.get("/keys").await.csrf();
    let replayed = browser
        .post_raw("/access/suspend", &[("csrf", foreign.as_str())])
        .await;
    assert_eq!(replayed.status, StatusCode::FORBIDDEN);
    let withdraw = browser
        .post_raw("/wallet/withdrawals", &[("amount", "100")])
        .await;
    assert_eq!(withdraw.status, StatusCode::FORBIDDEN);
    assert_eq!(
        h.engine
            .owner(h.fixture.marketer_a)
            .keys()
            .await
            .expect("keys")
            .len(),
        before
    );
    let account = h
        .engine
        .owner(h.fixture.marketer_a)
        .account()
        .await
        .expect("account");
    assert_eq!(account.api_status, ApiStatus::Approved);
    assert!(
        h.engine
            .owner(h.fixture.marketer_a)
            .withdrawals()
            .await
            .expect("list")
            .len()
            == 1
    );

    let anonymous = Browser::new(h);
    let post = anonymous.post_raw("/keys", &fields).await;
    assert_eq!(post.status, StatusCode::SEE_OTHER);
    let unknown = browser.get("/nowhere").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let wrong_method = browser.post_raw("/wallet", &[]).await;
    assert_eq!(wrong_method.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(wrong_method.header("allow"), Some("GET, HEAD"));
}

/// A hostile key name is escaped wherever it is shown; another account's key id is 404 and
/// stays live; the owner's own key is revoked and answers 401 at once.
pub async fn owner_pages_escape_names_and_hide_other_accounts_keys(h: &Harness) {
    let browser = Browser::new(h);
    browser.log_in(h.fixture.marketer_b).await;
    let hostile = "<script>alert('x')</script>\"><img src=x>";
    let created = browser
        .submit(
            "/keys",
            "/keys",
            &[("name", hostile), ("abilities", "catalog:read")],
        )
        .await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.body);
    assert!(!created.body.contains("<script>"), "{}", created.body);
    assert!(created.body.contains("&lt;script&gt;"));
    let key = created.text_of("new-key");
    let list = browser.get("/keys").await;
    assert!(!list.body.contains("<script>") && !list.body.contains("<img src=x>"));
    assert!(
        list.body
            .contains("&lt;script&gt;alert('x')&lt;/script&gt;&quot;&gt;&lt;img src=x&gt;")
    );
    assert!(!list.body.contains("<script"), "no script element at all");

    let theirs = h
        .engine
        .owner(h.fixture.marketer_a)
        .keys()
        .await
        .expect("keys");
    let target = theirs
        .iter()
        .find(|k| k.key.revoked_at.is_none())
        .expect("a live key")
        .key
        .id;
    let refused = browser
        .submit("/keys", &format!("/keys/{target}/revoke"), &[])
        .await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
    let still = h
        .engine
        .store()
        .key(target)
        .await
        .expect("read")
        .expect("key");
    assert_eq!(still.revoked_at, None);
    let absent = browser.submit("/keys", "/keys/999999/revoke", &[]).await;
    assert_eq!(absent.status, StatusCode::NOT_FOUND);

    let mine = h
        .engine
        .owner(h.fixture.marketer_b)
        .keys()
        .await
        .expect("keys");
    let id = mine
        .iter()
        .find(|k| k.key.name == hostile.trim())
        .expect("the new key")
        .key
        .id;
    assert_eq!(h.get(&key, "/api/v1/me").await.status, 200);
    let revoked = browser
        .submit("/keys", &format!("/keys/{id}/revoke"), &[])
        .await;
    assert_eq!(revoked.status, StatusCode::SEE_OTHER);
    h.get(&key, "/api/v1/me")
        .await
        .assert_error(401, "unauthenticated");
    let list = browser.get("/keys?done=1").await;
    assert!(list.body.contains("ملغي"));
}

/// Wrong fields are 422 with the shared message under the field, the values kept.
pub async fn owner_pages_show_errors_next_to_their_fields(h: &Harness) {
    let browser = Browser::new(h);
    browser.log_in(h.fixture.marketer_a).await;
    let blank = browser
        .submit(
            "/keys",
            "/keys",
            &[("name", "  "), ("abilities", "catalog:read")],
        )
        .await;
    assert_eq!(blank.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(blank.text_of("name-error"), messages::REQUIRED);
    let long = "م".repeat(crate::limits::MAX_KEY_NAME + 1);
    let too_long = browser
        .submit(
            "/keys",
            "/keys",
            &[("name", &long), ("abilities", "catalog:read")],
        )
        .await;
    assert_eq!(too_long.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        too_long.text_of("name-error"),
        messages::too_long(crate::limits::MAX_KEY_NAME)
    );
    let side = browser
        .submit(
            "/keys",
            "/keys",
            &[("name", "مورد"), ("abilities", "quotes:read")],
        )
        .await;
    assert_eq!(side.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(side.text_of("abilities-error"), messages::UNKNOWN_VALUE);
    assert!(
        side.body.contains("value=\"مورد\""),
        "the name typed is kept"
    );
    let none = browser.submit("/keys", "/keys", &[("name", "فاضي")]).await;
    assert_eq!(none.text_of("abilities-error"), messages::REQUIRED);
    let past = browser
        .submit(
            "/keys",
            "/keys",
            &[
                ("name", "قديم"),
                ("abilities", "catalog:read"),
                ("expires_at", "2026-11-21"),
            ],
        )
        .await;
    assert_eq!(past.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(past.text_of("expires_at-error"), messages::NOT_IN_FUTURE);
    let garbled = browser
        .submit(
            "/keys",
            "/keys",
            &[
                ("name", "x"),
                ("abilities", "catalog:read"),
                ("expires_at", "غدا"),
            ],
        )
        .await;
    assert_eq!(garbled.text_of("expires_at-error"), messages::UNKNOWN_VALUE);
    // Valid through the Cairo day given: it expires at the next midnight in Cairo.
    let dated = browser
        .submit(
            "/keys",
            "/keys",
            &[
                ("name", "لحد الخميس"),
                ("abilities", "catalog:read"),
                ("expires_at", "2026-11-26"),
            ],
        )
        .await;
    assert_eq!(dated.status, StatusCode::OK, "{}", dated.body);
    let keys = h
        .engine
        .owner(h.fixture.marketer_a)
        .keys()
        .await
        .expect("keys");
    let key = keys
        .iter()
        .find(|k| k.key.name == "لحد الخميس")
        .expect("created");
    assert_eq!(
        key.key.expires_at.map(|t| t.to_rfc3339()).as_deref(),
        Some("2026-11-26T22:00:00+00:00")
    );
    assert_eq!(key.key.rate_limit, h.engine.config().default_rate_limit);
}

/// The wallet page: figures as `GET /wallet`; a withdrawal below the minimum (422), over the
/// ready balance (409, under the amount), then one that fits (303, listed, `ready` lower);
/// on a closed day the form is gone and a request is 409.
pub async fn owner_pages_wallet_and_withdrawals(h: &Harness) {
    let browser = Browser::new(h);
    browser.log_in(h.fixture.marketer_a).await;
    let api = h.get("sk_demo_marketer", "/api/v1/wallet").await.json();
    let ready: rust_decimal::Decimal = api["data"]["ready"]
        .as_str()
        .expect("ready")
        .parse()
        .expect("money");
    let page = browser.get("/wallet").await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(
        page.text_of("ready"),
        format!("{} جنيه", crate::money::money_string(ready))
    );
    let fields = |amount: &'static str| {
        [
            ("amount", amount),
            ("wallet_number", "010 1234 5678"),
            ("wallet_description", "فودافون كاش"),
        ]
    };
    let low = browser
        .submit("/wallet", "/wallet/withdrawals", &fields("50"))
        .await;
    assert_eq!(low.status, StatusCode::UNPROCESSABLE_ENTITY);
    let minimum = h.engine.config().withdrawal_minimum;
    assert_eq!(
        low.text_of("amount-error"),
        messages::problem(Problem::BelowMinimum { minimum })
    );
    let over = browser
        .submit("/wallet", "/wallet/withdrawals", &fields("99999"))
        .await;
    assert_eq!(over.status, StatusCode::CONFLICT);
    assert_eq!(
        over.text_of("amount-error"),
        messages::over_ready_balance(ready)
    );
    let bad = browser
        .submit("/wallet", "/wallet/withdrawals", &fields("١٢x"))
        .await;
    assert_eq!(bad.text_of("amount-error"), messages::INVALID_MONEY);
    let ok = browser
        .submit("/wallet", "/wallet/withdrawals", &fields("١٠٠٫٥٠"))
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    let after = browser.get("/wallet?done=1").await;
    let expected = ready - rust_decimal::Decimal::new(10_050, 2);
    assert_eq!(
        after.text_of("ready"),
        format!("{} جنيه", crate::money::money_string(expected))
    );
    assert!(after.body.contains("100.50 جنيه") && after.body.contains("01012345678"));
    let listed = h
        .engine
        .owner(h.fixture.marketer_a)
        .withdrawals()
        .await
        .expect("list");
    assert_eq!(listed[0].amount, rust_decimal::Decimal::new(10_050, 2));
    assert_eq!(listed[0].status, WithdrawalStatus::Pending);

    h.clock.advance(chrono::Duration::days(1)); // Monday in Cairo: closed
    let closed = browser.get("/wallet").await;
    assert!(
        !closed.body.contains("/account/wallet/withdrawals"),
        "no form on a closed day"
    );
    // A form kept open in another tab since an open day (the keys page's token is the same).
    let token = browser.get("/keys").await.csrf();
    let refused = browser
        .post_raw(
            "/wallet/withdrawals",
            &[
                ("csrf", token.as_str()),
                ("amount", "100"),
                ("wallet_number", "01012345678"),
                ("wallet_description", "x"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert!(
        refused
            .body
            .contains(&messages::withdrawal_window_closed("2026-11-26")),
        "{}",
        refused.body
    );
}

/// Served over `https` (`with_secure_cookies(true)`, as the production example does), every
/// cookie the pages set is `Secure`: the CSRF cookie and the demo login's session, set and
/// cleared; served as by default (the sandbox on loopback `http`), none is.
pub async fn owner_pages_cookies_are_secure_when_served_over_https(h: &Harness) {
    use super::pages_client::Page;
    use crate::owner_pages::OwnerPages;
    use crate::sandbox::DemoLogin;

    let set_cookies = |page: &Page| -> Vec<String> {
        page.headers
            .get_all(http::header::SET_COOKIE)
            .iter()
            .map(|v| v.to_str().expect("ASCII").to_owned())
            .collect()
    };
    let account = h.fixture.marketer_a.to_string();
    for secure in [true, false] {
        let pages = OwnerPages::new(h.engine.clone(), DemoLogin::new("/account"))
            .mounted_at("/account")
            .with_secure_cookies(secure);
        let browser = Browser::on(pages);
        let login = browser.get("/login").await;
        let mut cookies = set_cookies(&login);
        let token = login.csrf();
        let fields = [("csrf", token.as_str()), ("account", account.as_str())];
        let logged_in = browser.post_raw("/login", &fields).await;
        assert_eq!(logged_in.status, StatusCode::SEE_OTHER);
        cookies.extend(set_cookies(&logged_in));
        let logged_out = browser
            .post_raw("/logout", &[("csrf", token.as_str())])
            .await;
        cookies.extend(set_cookies(&logged_out));
        assert_eq!(cookies.len(), 3, "{cookies:?}");
        for cookie in cookies {
            assert_eq!(cookie.ends_with("; Secure"), secure, "{cookie}");
            assert!(cookie.contains("; HttpOnly"), "{cookie}");
        }
    }
}
