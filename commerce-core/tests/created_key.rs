//! A created key's plaintext is shown once, in its field: never by its `Debug`, so that a log
//! of the value leaks no key.

use std::sync::Arc;

use commerce_core::model::{Ability, NewAccount};
use commerce_core::operator::KeySpec;
use commerce_core::store::MemoryStore;
use commerce_core::{Engine, KEY_PREFIX};

#[tokio::test]
async fn a_created_keys_debug_never_shows_its_plaintext() {
    let engine = Engine::new(Arc::new(MemoryStore::new()));
    let op = engine.operator();
    let who = NewAccount::marketer("أحمد", "متجر أحمد", "ahmed@example.com", "01012345678");
    let account = op.create_account(who).await.unwrap();
    let spec = KeySpec::new("متجري", [Ability::CatalogRead]);
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
