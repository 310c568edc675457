//! The owner's Rust API ([`Owner`](crate::owner::Owner)): its API access moves, the same refusal as
//! the operator's and the pages' for the same bad input, and withdrawals raced.

use std::sync::Arc;

use http::StatusCode;
use rust_decimal::Decimal;

use super::Harness;
use super::pages_client::Browser;
use crate::domain::keys::KeySpec;
use crate::model::*;
use crate::operator::{Conflict, OperatorError};
use crate::owner::WithdrawalForm;
use crate::render::messages;

fn field_problems(error: OperatorError) -> Vec<(String, Problem)> {
    match error {
        OperatorError::Invalid(problems) => {
            problems.into_iter().map(|p| (p.field, p.problem)).collect()
        }
        other => panic!("expected field problems, got {other:?}"),
    }
}

/// The same bad input is refused the same way by the operator, the owner and the pages: a
/// withdrawal below the minimum, a wallet number that is not a mobile, a key name too long.
pub async fn owner_operator_and_pages_refuse_the_same_input_alike(h: &Harness) {
    let a = h.fixture.marketer_a;
    let op = h.engine.operator();
    let owner = h.engine.owner(a);
    let minimum = h.engine.config().withdrawal_minimum;
    let low = Decimal::new(5_000, 2);

    let by_operator = op
        .request_withdrawal(
            NewWithdrawal::builder()
                .account_id(a)
                .amount(low)
                .wallet_number("0101234".to_owned())
                .wallet_description("محفظة".to_owned())
                .build(),
        )
        .await
        .expect_err("refused");
    let by_owner = owner
        .request_withdrawal(WithdrawalForm::new(low, "0101234", "محفظة"))
        .await
        .expect_err("refused");
    let expected = vec![
        ("amount".to_owned(), Problem::BelowMinimum { minimum }),
        ("wallet_number".to_owned(), Problem::InvalidPhone),
    ];
    assert_eq!(field_problems(by_operator), expected);
    assert_eq!(field_problems(by_owner), expected);
    let browser = Browser::new(h);
    browser.log_in(a).await;
    let page = browser
        .submit(
            "/wallet",
            "/wallet/withdrawals",
            &[
                ("amount", "50.00"),
                ("wallet_number", "0101234"),
                ("wallet_description", "محفظة"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        page.text_of("amount-error"),
        messages::problem(Problem::BelowMinimum { minimum })
    );
    assert_eq!(page.text_of("wallet_number-error"), messages::INVALID_PHONE);

    let long = "ك".repeat(crate::limits::MAX_KEY_NAME + 1);
    let spec = KeySpec::new(long.clone(), vec![Ability::CatalogRead], None, None);
    let by_operator = op.create_key(a, spec.clone()).await.expect_err("refused");
    let by_owner = owner.create_key(spec).await.expect_err("refused");
    let expected = vec![(
        "name".to_owned(),
        Problem::TooLong {
            max: crate::limits::MAX_KEY_NAME,
        },
    )];
    assert_eq!(field_problems(by_operator), expected);
    assert_eq!(field_problems(by_owner), expected);
    let page = browser
        .submit(
            "/keys",
            "/keys",
            &[("name", &long), ("abilities", "catalog:read")],
        )
        .await;
    assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        page.text_of("name-error"),
        messages::too_long(crate::limits::MAX_KEY_NAME)
    );
    assert_eq!(
        h.engine.owner(a).withdrawals().await.expect("list").len(),
        1,
        "nothing written"
    );
}

/// API access as the owner moves it: request (pending where the team approves; approved at
/// once in the sandbox), suspend (the keys stop at once: 403 `api_not_enabled`), cancel, and
/// request again; moves the status does not allow are refused; keys only once approved, of
/// the account's side only, expiring later than now.
pub async fn owner_moves_api_access_as_the_specification_allows(h: &Harness) {
    // An engine of the same store and clock where the team approves.
    let mut config = h.engine.config().clone();
    config.approve_api_requests = false;
    let clock = Arc::new(h.clock.clone());
    let strict = crate::Engine::builder(h.engine.store().clone())
        .config(config)
        .clock(clock)
        .build()
        .expect("valid settings");
    let newcomer = strict.owner(h.fixture.newcomer);
    let refused = newcomer
        .suspend_api_access()
        .await
        .expect_err("nothing to suspend");
    assert!(matches!(
        refused,
        OperatorError::Conflict(Conflict::ApiStatusNotAllowed {
            current: ApiStatus::None,
            requested: ApiStatus::Suspended
        })
    ));
    let early = newcomer
        .create_key(KeySpec::new(
            "مبكر".to_owned(),
            vec![Ability::CatalogRead],
            None,
            None,
        ))
        .await
        .expect_err("not approved");
    assert!(matches!(
        early,
        OperatorError::Conflict(Conflict::ApiAccessNotApproved {
            current: ApiStatus::None
        })
    ));
    let pending = newcomer.request_api_access().await.expect("requested");
    assert_eq!(pending.api_status, ApiStatus::Pending);
    assert!(
        newcomer.request_api_access().await.is_err(),
        "already pending"
    );
    strict
        .operator()
        .set_api_status(h.fixture.newcomer, ApiStatus::Approved)
        .await
        .expect("approved");

    let wrong_side = newcomer
        .create_key(KeySpec::new(
            "مورد".to_owned(),
            vec![Ability::QuotesRead],
            None,
            None,
        ))
        .await
        .expect_err("a supplier's ability");
    assert_eq!(
        field_problems(wrong_side),
        vec![("abilities".to_owned(), Problem::UnknownValue)]
    );
    let past = KeySpec::new(
        "قديم".to_owned(),
        vec![Ability::CatalogRead],
        Some(h.clock.now_utc()),
        None,
    );
    assert_eq!(
        field_problems(newcomer.create_key(past).await.expect_err("past")),
        vec![("expires_at".to_owned(), Problem::NotInFuture)]
    );
    let created = newcomer
        .create_key(KeySpec::new(
            "  متجري  ".to_owned(),
            vec![Ability::CatalogRead, Ability::CatalogRead],
            None,
            Some(9),
        ))
        .await
        .expect("created");
    assert_eq!(created.key.name, "متجري");
    assert_eq!(created.key.abilities, vec![Ability::CatalogRead]);
    assert_eq!(created.key.rate_limit, h.engine.config().default_rate_limit);
    assert_eq!(h.get(&created.plaintext, "/api/v1/me").await.status, 200);

    let suspended = newcomer.suspend_api_access().await.expect("suspended");
    assert_eq!(suspended.api_status, ApiStatus::Suspended);
    let stopped = h.get(&created.plaintext, "/api/v1/me").await;
    stopped.assert_error(403, "api_not_enabled");
    assert_eq!(stopped.json()["error"]["api_status"], "suspended");
    let cancelled = newcomer.cancel_api_access().await.expect("cancelled");
    assert_eq!(cancelled.api_status, ApiStatus::Cancelled);
    assert!(
        newcomer.cancel_api_access().await.is_err(),
        "already cancelled"
    );
    // Again through the sandbox's engine: approved at once.
    let again = h
        .engine
        .owner(h.fixture.newcomer)
        .request_api_access()
        .await
        .expect("again");
    assert_eq!(again.api_status, ApiStatus::Approved);
    assert_eq!(h.get(&created.plaintext, "/api/v1/me").await.status, 200);
    let missing = h.engine.owner(AccountId::new(999_999));
    assert!(matches!(
        missing.account().await,
        Err(OperatorError::NotFound)
    ));
}

/// 12 withdrawal requests at once through the owner's API on marketer A's ready balance:
/// exactly as many are accepted as the balance covers, the rest refused as over the balance
/// (the operator's rule, decided by the store), and `ready` drops by what was accepted.
pub async fn race_owner_withdrawals_never_overdraw(h: &Harness) {
    let account = h.fixture.marketer_a;
    let before = h.engine.owner(account).wallet().await.expect("wallet");
    let ready = before.ready;
    let amount = h
        .engine
        .config()
        .withdrawal_minimum
        .max((ready / Decimal::from(3)).floor());
    let covered = (ready / amount).floor();
    assert!(
        covered >= Decimal::ONE,
        "marketer A can withdraw the minimum"
    );
    let mut tasks = Vec::new();
    for _ in 0..12 {
        let owner = h.engine.owner(account);
        tasks.push(tokio::spawn(async move {
            owner
                .request_withdrawal(WithdrawalForm::new(amount, "01012345678", "فودافون كاش"))
                .await
        }));
    }
    let (mut accepted, mut refused) = (0, 0);
    for task in tasks {
        match task.await.expect("task") {
            Ok(_) => accepted += 1,
            Err(OperatorError::Conflict(Conflict::OverReadyBalance { .. })) => refused += 1,
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    assert_eq!((Decimal::from(accepted), refused), (covered, 12 - accepted));
    let after = h.engine.owner(account).wallet().await.expect("wallet");
    assert_eq!(after.ready, ready - covered * amount);
    assert!(after.ready >= Decimal::ZERO);
    let pending = h.engine.owner(account).withdrawals().await.expect("list");
    assert_eq!(
        pending
            .iter()
            .filter(|w| w.status == WithdrawalStatus::Pending)
            .count(),
        accepted
    );
}
