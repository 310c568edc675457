//! A created key's plaintext is shown once, in its field: never by its `Debug`, so that a log
//! of the value leaks no key. Its prefix says whether it is live or a sandbox's test key.

use std::sync::Arc;

use commerce_core::domain::keys::KeySpec;
use commerce_core::model::{Ability, AccountState, ApiStatus, NewAccount};
use commerce_core::store::MemoryStore;
use commerce_core::{Engine, KEY_PREFIX, TEST_KEY_PREFIX};

#[tokio::test]
async fn a_created_keys_debug_never_shows_its_plaintext() {
    let engine = Engine::new(Arc::new(MemoryStore::new()));
    let op = engine.operator();
    let who = NewAccount::marketer("أحمد", "متجر أحمد", "ahmed@example.com", "01012345678");
    let account = op.create_account(who).await.unwrap();
    let spec = KeySpec::new("متجري".to_owned(), vec![Ability::CatalogRead], None, None);
    let created = op.create_key(account.id, spec).await.unwrap();
    assert!(created.plaintext.starts_with(KEY_PREFIX));
    let shown = format!("{created:?}");
    assert!(!shown.contains(&created.plaintext), "{shown}");
    assert!(!shown.contains(KEY_PREFIX), "{shown}");
    assert!(shown.contains(r#"plaintext: "<redacted>""#), "{shown}");
    assert!(shown.contains(&format!("{:?}", created.key.id)), "{shown}");
    let pretty = format!("{created:#?}");
    assert!(!pretty.contains(&created.plaintext), "{pretty}");
}

/// An imported key has at least `MIN_KEY_LENGTH` (32) characters: 31 is refused on
/// `plaintext` and stores nothing, 32 (in characters, not bytes) is taken and authenticates.
#[tokio::test]
async fn an_imported_key_has_at_least_32_characters() {
    use commerce_core::model::Problem;
    use commerce_core::operator::MIN_KEY_LENGTH;
    use commerce_core::{hash_key, operator::OperatorError};

    assert_eq!(MIN_KEY_LENGTH, 32);
    let engine = Engine::new(Arc::new(MemoryStore::new()));
    let op = engine.operator();
    let who = NewAccount::marketer("أحمد", "متجر أحمد", "ahmed@example.com", "01012345678");
    let account = op.create_account(who).await.unwrap();
    let spec = || KeySpec::new("مستورد".to_owned(), vec![Ability::CatalogRead], None, None);
    let short = "k".repeat(MIN_KEY_LENGTH - 1);
    match op.import_key(account.id, &short, spec()).await {
        Err(OperatorError::Invalid(problems)) => {
            assert_eq!(problems.len(), 1);
            assert_eq!(problems[0].field, "plaintext");
            assert_eq!(problems[0].problem, Problem::TooShort { min: 32 });
        }
        other => panic!("an 8 to 31 character key must be refused: {other:?}"),
    }
    let store = engine.store();
    assert_eq!(store.key_by_hash(&hash_key(&short)).await.unwrap(), None);
    for long_enough in ["k".repeat(MIN_KEY_LENGTH), "ك".repeat(MIN_KEY_LENGTH)] {
        let key = op
            .import_key(account.id, &long_enough, spec())
            .await
            .unwrap();
        assert_eq!(
            store.key_by_hash(&hash_key(&long_enough)).await.unwrap(),
            Some(key)
        );
    }
}

/// Keys created on an engine in the sandbox's test mode start with `sk_test_` (through the
/// operator and through the owner's API alike); a production engine's with `sk_live_`.
#[tokio::test]
async fn keys_created_in_test_mode_are_test_keys() {
    for test_mode in [false, true] {
        let engine = Engine::builder(Arc::new(MemoryStore::new()))
            .configure(|c| c.test_mode = test_mode)
            .build()
            .unwrap();
        let op = engine.operator();
        let who = NewAccount::marketer("أحمد", "متجر أحمد", "ahmed@example.com", "01012345678");
        let account = op.create_account(who).await.unwrap();
        op.set_account_state(account.id, AccountState::Active)
            .await
            .unwrap();
        op.set_api_status(account.id, ApiStatus::Approved)
            .await
            .unwrap();
        let by_operator = op
            .create_key(
                account.id,
                KeySpec::new("متجري".to_owned(), vec![Ability::CatalogRead], None, None),
            )
            .await
            .unwrap();
        let by_owner = engine
            .owner(account.id)
            .create_key(KeySpec::new(
                "متجري التاني".to_owned(),
                vec![Ability::CatalogRead],
                None,
                None,
            ))
            .await
            .unwrap();
        let (wanted, other) = if test_mode {
            (TEST_KEY_PREFIX, KEY_PREFIX)
        } else {
            (KEY_PREFIX, TEST_KEY_PREFIX)
        };
        for created in [&by_operator, &by_owner] {
            assert!(
                created.plaintext.starts_with(wanted),
                "test mode {test_mode}"
            );
            assert!(
                !created.plaintext.starts_with(other),
                "test mode {test_mode}"
            );
            assert_eq!(created.plaintext.len(), wanted.len() + 40);
        }
    }
}
