//! The webhook client ignores `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY`: through a proxy
//! taken from the environment the checking resolver would never see the target (DNS
//! rebinding). Environment variables are process-wide and reqwest reads them when a client is
//! built, so the attempt runs in a child process of this test binary with the variables set,
//! pointing at a listener of the parent's that must never be connected to.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use commerce_core::domain::webhooks::WebhookInput;
use commerce_core::store::MemoryStore;
use commerce_core::testing::http::receiver::Receiver;
use commerce_core::webhooks::DispatcherConfig;
use commerce_core::{Engine, sandbox};

/// Set in the child: the proxy's address, which the child's environment names.
const CHILD: &str = "COMMERCE_TEST_PROXY_CHILD";

#[test]
fn proxy_environment_variables_are_ignored() {
    let proxy = TcpListener::bind("127.0.0.1:0").expect("bind a local port");
    proxy.set_nonblocking(true).expect("non-blocking");
    let url = format!("http://{}", proxy.local_addr().expect("bound"));
    let output = Command::new(std::env::current_exe().expect("this test binary"))
        .args(["--exact", "attempt_with_proxy_variables_set", "--nocapture"])
        .env(CHILD, &url)
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .env("HTTP_PROXY", &url)
        .env("http_proxy", &url)
        .env("HTTPS_PROXY", &url)
        .env("https_proxy", &url)
        .env("ALL_PROXY", &url)
        .env("all_proxy", &url)
        .output()
        .expect("run the child");
    let connected = match proxy.accept() {
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::WouldBlock => false,
        Err(e) => panic!("accept: {e}"),
    };
    assert!(
        !connected,
        "the webhook client connected to the proxy of the environment"
    );
    assert!(
        output.status.success(),
        "the child's attempt:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("1 passed"),
        "the child ran its test: {}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// The child's part (does nothing unless started by the test above): one ping to a receiver
/// on 127.0.0.1 reaches the receiver directly.
#[tokio::test]
async fn attempt_with_proxy_variables_set() {
    if std::env::var(CHILD).is_err() {
        return;
    }
    let engine = Engine::builder(Arc::new(MemoryStore::new()))
        .config(sandbox::config())
        .build()
        .expect("valid settings");
    let fixture = sandbox::seed(&engine).await.expect("sandbox seeds");
    let receiver = Receiver::start().await;
    let operator = engine.operator();
    let hook = operator
        .create_webhook(fixture.marketer_a, WebhookInput::url(&receiver.url))
        .await
        .expect("a loopback receiver in the sandbox");
    operator.ping_webhook(hook.id).await.expect("a ping");
    let dispatcher = engine
        .dispatcher()
        .with_config(DispatcherConfig::default().with_timeout(Duration::from_secs(2)));
    assert_eq!(dispatcher.deliver_due().await.expect("a pass"), 1);
    assert_eq!(
        receiver.received().len(),
        1,
        "the ping went straight to the receiver"
    );
}
