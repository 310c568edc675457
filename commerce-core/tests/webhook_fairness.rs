//! Webhook fairness on [`MemoryStore`]: a tarpit endpoint fed pings does not slow another
//! account's deliveries, nor does a crowd of accounts whose receivers answer slowly, with one
//! dispatcher and with two sharing the store (two instances). The same scenarios run on
//! PostgreSQL in `commerce-store-sqlx/tests/two_instances.rs`.

use std::sync::Arc;

use commerce_core::Engine;
use commerce_core::sandbox;
use commerce_core::store::MemoryStore;
use commerce_core::testing::crowd::a_crowd_of_slow_accounts_leaves_room_for_a_polite_one;
use commerce_core::testing::fairness::a_dead_receiver_slows_only_its_own_endpoint;

async fn engines(count: usize) -> (Vec<Engine>, sandbox::Sandbox) {
    let store = Arc::new(MemoryStore::new());
    let engines: Vec<Engine> = (0..count)
        .map(|_| {
            Engine::builder(store.clone())
                .config(sandbox::config())
                .build()
                .expect("valid settings")
        })
        .collect();
    let fixture = sandbox::seed(&engines[0]).await.expect("the sandbox seeds");
    (engines, fixture)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_receiver_slows_only_its_own_endpoint_with_one_dispatcher() {
    let (engines, f) = engines(1).await;
    a_dead_receiver_slows_only_its_own_endpoint(&engines, f.marketer_a, f.marketer_b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_receiver_slows_only_its_own_endpoint_with_two_dispatchers() {
    let (engines, f) = engines(2).await;
    a_dead_receiver_slows_only_its_own_endpoint(&engines, f.marketer_a, f.marketer_b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_crowd_of_slow_accounts_leaves_room_for_a_polite_one_with_one_dispatcher() {
    let (engines, _) = engines(1).await;
    a_crowd_of_slow_accounts_leaves_room_for_a_polite_one(&engines).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_crowd_of_slow_accounts_leaves_room_for_a_polite_one_with_two_dispatchers() {
    let (engines, _) = engines(2).await;
    a_crowd_of_slow_accounts_leaves_room_for_a_polite_one(&engines).await;
}
