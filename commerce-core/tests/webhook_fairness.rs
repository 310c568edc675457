//! Webhook fairness on [`MemoryStore`]: a tarpit endpoint fed pings does not slow another
//! account's deliveries, with one dispatcher and with two sharing the store (two instances).
//! The same scenario runs on PostgreSQL in `commerce-store-sqlx/tests/two_instances.rs`.

use std::sync::Arc;

use commerce_core::Engine;
use commerce_core::sandbox;
use commerce_core::store::MemoryStore;
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
