//! What the owner may ask for, by the account's state: at most [`MAX_LIVE_KEYS`] live keys
//! (raced, and the keys page paged), nothing while the account is not active, and a
//! suspension by the team lifted by the team only.

use std::sync::Arc;

use http::StatusCode;
use rust_decimal::Decimal;

use super::Harness;
use super::pages_client::Browser;
use crate::domain::keys::KeySpec;
use crate::model::*;
use crate::operator::{Conflict, MAX_LIVE_KEYS, OperatorError};
use crate::owner::WithdrawalForm;
use crate::render::messages;

fn live(h: &Harness, keys: &[KeyListing]) -> usize {
    let now = h.clock.now_utc();
    keys.iter().filter(|k| k.key.is_live(now)).count()
}

fn spec(n: usize) -> KeySpec {
    KeySpec::new(
        format!("مفتاح-{n:03}"),
        vec![Ability::CatalogRead],
        None,
        None,
    )
}

/// The key rows of a keys page.
fn rows(body: &str) -> usize {
    body.matches("data-label=\"الاسم\"").count()
}

fn conflict(result: Result<impl std::fmt::Debug, OperatorError>) -> Conflict {
    match result {
        Err(OperatorError::Conflict(conflict)) => conflict,
        other => panic!("expected a conflict, got {other:?}"),
    }
}

/// Marketer A brought to 15 live keys, then 30 keys asked for at once through the owner's
/// API: exactly 5 are made, 25 refused with `Conflict::KeyLimit` (the API's `key_limit`), and
/// the account has exactly 20 live keys; the operator and the keys page (409 with its Arabic
/// message) are refused alike; a revoked key frees a place. The keys page lists them 20 a
/// page, newest first, with links to the older and newer pages.
pub async fn owner_keys_are_capped_and_paged(h: &Harness) {
    let a = h.fixture.marketer_a;
    let owner = h.engine.owner(a);
    let mut n = 0;
    while live(h, &owner.keys().await.expect("keys")) < 15 {
        owner.create_key(spec(n)).await.expect("under the cap");
        n += 1;
    }
    let owner = Arc::new(owner);
    let tasks: Vec<_> = (0..30)
        .map(|i| {
            let owner = owner.clone();
            tokio::spawn(async move { owner.create_key(spec(100 + i)).await })
        })
        .collect();
    let (mut made, mut refused) = (0, 0);
    for task in tasks {
        match task.await.expect("task") {
            Ok(_) => made += 1,
            Err(OperatorError::Conflict(Conflict::KeyLimit { limit })) => {
                assert_eq!(limit, MAX_LIVE_KEYS);
                refused += 1;
            }
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    assert_eq!((made, refused), (5, 25));
    assert_eq!(live(h, &owner.keys().await.expect("keys")), MAX_LIVE_KEYS);

    let by_operator = conflict(h.engine.operator().create_key(a, spec(200)).await);
    assert_eq!(
        by_operator,
        Conflict::KeyLimit {
            limit: MAX_LIVE_KEYS
        }
    );
    assert_eq!(by_operator.reason().map(|r| r.as_str()), Some("key_limit"));
    let browser = Browser::new(h);
    browser.log_in(a).await;
    let fields = [("name", "واحد كمان"), ("abilities", "catalog:read")];
    let page = browser.submit("/keys", "/keys", &fields).await;
    assert_eq!(page.status, StatusCode::CONFLICT, "{}", page.body);
    assert!(page.body.contains(&messages::key_limit(MAX_LIVE_KEYS)));
    assert!(!page.body.contains("new-key"), "no key shown");

    // Revoking the newest frees its place.
    let newest = owner
        .key_page(PageRequest::new(1, 1).expect("a valid page"))
        .await
        .expect("a page");
    let revoke = format!("/keys/{}/revoke", newest.items[0].key.id);
    let revoked = browser.submit("/keys", &revoke, &[]).await;
    assert_eq!(revoked.status, StatusCode::SEE_OTHER);
    let created = browser.submit("/keys", "/keys", &fields).await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.body);

    // 20 a page, newest first.
    let all = owner.keys().await.expect("keys");
    let pages = all.len().div_ceil(20);
    assert!(pages >= 2, "{} keys", all.len());
    let first = browser.get("/keys").await;
    assert_eq!(rows(&first.body), 20);
    assert_eq!(first.text_of("keys-page"), format!("صفحة 1 من {pages}"));
    assert!(
        first.body.contains("واحد كمان"),
        "the newest key is on the first page"
    );
    assert!(first.body.contains("?page=2"));
    let oldest = &all[0].key.name;
    assert!(!first.body.contains(oldest.as_str()));
    let last = browser.get(&format!("/keys?page={pages}")).await;
    assert_eq!(last.status, StatusCode::OK);
    assert_eq!(rows(&last.body), all.len() - 20 * (pages - 1));
    assert!(last.body.contains(oldest.as_str()));
    assert!(last.body.contains(&format!("?page={}", pages - 1)));
    let past = browser.get(&format!("/keys?page={}", pages + 1)).await;
    assert_eq!(past.status, StatusCode::OK);
    assert_eq!(rows(&past.body), 0);
    // A `page` that is not a whole number from 1 is refused, not read as page 1.
    for garbage in ["abc", "0", "-1", "", "99999999999"] {
        let refused = browser.get(&format!("/keys?page={garbage}")).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "page={garbage}");
        assert!(
            refused.body.contains(messages::PAGE_NUMBER),
            "page={garbage}"
        );
    }
}

/// The team's suspension of API access is lifted by the team only: the owner can neither
/// request access again nor cancel it (403 on the pages, with its Arabic message), the access
/// page offers neither; the owner's own suspension stays the owner's to lift, unless the team
/// suspends it too. An account that is not active requests no API access, key or withdrawal
/// (403 on the pages), and nothing is written.
pub async fn owner_flows_follow_the_account_state_and_the_teams_suspension(h: &Harness) {
    let op = h.engine.operator();
    let b = h.fixture.marketer_b;
    let owner = h.engine.owner(b);
    let browser = Browser::new(h);
    browser.log_in(b).await;
    let token = browser.get("/").await.csrf();

    op.set_api_status(b, ApiStatus::Suspended)
        .await
        .expect("the team suspends");
    assert_eq!(
        conflict(owner.request_api_access().await),
        Conflict::ApiSuspendedByTeam
    );
    assert_eq!(
        conflict(owner.cancel_api_access().await),
        Conflict::ApiSuspendedByTeam
    );
    let page = browser
        .post_raw("/access/request", &[("csrf", token.as_str())])
        .await;
    assert_eq!(page.status, StatusCode::FORBIDDEN, "{}", page.body);
    assert!(page.body.contains(messages::API_SUSPENDED_BY_TEAM));
    let access = browser.get("/").await;
    assert!(access.body.contains("suspended-by-team"));
    assert!(!access.body.contains("/account/access/request"));
    assert!(!access.body.contains("/account/access/cancel"));
    let account = owner.account().await.expect("account");
    assert_eq!(
        (account.api_status, account.api_status_by),
        (ApiStatus::Suspended, ChangedBy::Team)
    );

    // The team approves again; the owner's own suspension is the owner's to lift.
    op.set_api_status(b, ApiStatus::Approved)
        .await
        .expect("approved");
    let own = owner.suspend_api_access().await.expect("suspended");
    assert_eq!(own.api_status_by, ChangedBy::Owner);
    let lifted = owner.request_api_access().await.expect("lifted");
    assert_eq!(
        lifted.api_status,
        ApiStatus::Approved,
        "the sandbox approves"
    );
    // Suspended by both: the team's now.
    owner.suspend_api_access().await.expect("suspended");
    op.set_api_status(b, ApiStatus::Suspended)
        .await
        .expect("the team suspends too");
    assert_eq!(
        conflict(owner.request_api_access().await),
        Conflict::ApiSuspendedByTeam
    );

    // Marketer A, suspended by the platform: no withdrawal, no key.
    let a = h.fixture.marketer_a;
    let owner = h.engine.owner(a);
    let browser = Browser::new(h);
    browser.log_in(a).await;
    let token = browser.get("/").await.csrf();
    let before = (
        owner.withdrawals().await.expect("list").len(),
        owner.keys().await.expect("keys").len(),
    );
    op.set_account_state(a, AccountState::Suspended)
        .await
        .expect("suspended");
    let inactive = Conflict::AccountNotActive {
        state: AccountState::Suspended,
    };
    let form = WithdrawalForm::new(Decimal::new(10_000, 2), "01012345678", "فودافون كاش");
    assert_eq!(conflict(owner.request_withdrawal(form).await), inactive);
    assert_eq!(conflict(owner.create_key(spec(1)).await), inactive);
    for (action, fields) in [
        (
            "/wallet/withdrawals",
            vec![
                ("amount", "100"),
                ("wallet_number", "01012345678"),
                ("wallet_description", "فودافون كاش"),
            ],
        ),
        (
            "/keys",
            vec![("name", "مفتاح"), ("abilities", "catalog:read")],
        ),
    ] {
        let mut all = vec![("csrf", token.as_str())];
        all.extend(fields);
        let page = browser.post_raw(action, &all).await;
        assert_eq!(
            page.status,
            StatusCode::FORBIDDEN,
            "{action}: {}",
            page.body
        );
        assert!(
            page.body.contains(messages::OWNER_ACCOUNT_NOT_ACTIVE),
            "{action}"
        );
    }
    assert!(
        !browser
            .get("/keys")
            .await
            .body
            .contains("action=\"/account/keys\"")
    );
    assert!(
        !browser
            .get("/wallet")
            .await
            .body
            .contains("action=\"/account/wallet/withdrawals\"")
    );
    let after = (
        owner.withdrawals().await.expect("list").len(),
        owner.keys().await.expect("keys").len(),
    );
    assert_eq!(after, before, "nothing written");

    // The newcomer, deleted: no API access asked.
    let newcomer = h.fixture.newcomer;
    let browser = Browser::new(h);
    browser.log_in(newcomer).await;
    let token = browser.get("/").await.csrf();
    op.set_account_state(newcomer, AccountState::Deleted)
        .await
        .expect("deleted");
    assert_eq!(
        conflict(h.engine.owner(newcomer).request_api_access().await),
        Conflict::AccountNotActive {
            state: AccountState::Deleted
        }
    );
    let page = browser
        .post_raw("/access/request", &[("csrf", token.as_str())])
        .await;
    assert_eq!(page.status, StatusCode::FORBIDDEN);
    assert!(page.body.contains(messages::OWNER_ACCOUNT_NOT_ACTIVE));
    let account = h.engine.owner(newcomer).account().await.expect("account");
    assert_eq!(account.api_status, ApiStatus::None);
}
