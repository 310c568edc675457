//! The owner onboarding in a real browser: headless Chromium
//! driven over WebDriver (chromedriver) through the sandbox's owner pages, with a screenshot of
//! each page saved to `docs/onboarding/`. Run by `.ci/browser.sh`, which installs Chromium when
//! it is absent; ignored by a plain `cargo test` (it needs the browser):
//!
//! ```text
//! cargo test -p commerce-dev --test browser -- --ignored
//! ```
//!
//! A newcomer logs in through the demo login, requests API access (the sandbox approves at
//! once), creates a key with `catalog:read`, copies it from the page, and `GET /api/v1/me`
//! with it answers 200; then marketer A requests a withdrawal from the wallet page (a refusal
//! under the field first). The engine's clock is set inside a withdrawal window (the next
//! Sunday or Thursday, noon in Cairo), the only thing this test changes of the sandbox.
//!
//! The API reference (`GET /api/v1/docs`) is read in the same browser: every operation of the
//! OpenAPI document is on the page, an element whose id is its `operationId`, showing its
//! method and path, and the page loads nothing besides itself.
//!
//! Settings: `CHROMEDRIVER` (default `chromedriver`), `CHROMIUM` (default `/usr/bin/chromium`),
//! `COMMERCE_SCREENSHOTS` (default `docs/onboarding` of the repository).

use std::net::TcpListener as StdListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use commerce::clock::ManualClock;
use commerce::domain::wallet::withdrawal_window;
use commerce::store::MemoryStore;
use commerce::{Engine, sandbox};
use fantoccini::{Client, ClientBuilder, Locator};

/// The chromedriver process, killed when the test ends (passed or not).
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

async fn start_driver() -> (Driver, String) {
    let port = free_port();
    let program = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
    let child = Command::new(&program)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} does not start ({e}): run .ci/browser.sh"));
    let driver = Driver(child);
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return (driver, format!("http://127.0.0.1:{port}"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("chromedriver did not listen on {port}");
}

/// chromedriver and a Chromium session through it (the driver ends when dropped).
async fn chromium() -> (Driver, Client) {
    let (driver, url) = start_driver().await;
    let client = browser(&url).await;
    (driver, client)
}

async fn browser(driver: &str) -> Client {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--window-size=430,900", "--lang=ar",
                     "--hide-scrollbars", "--force-device-scale-factor=1"],
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(capabilities)
        .connect(driver)
        .await
        .expect("a Chromium session")
}

/// Saves the whole page (the window grown to the page's height) as `docs/onboarding/<name>.png`.
async fn screenshot(client: &Client, name: &str) {
    let height = client
        .execute("return document.documentElement.scrollHeight", vec![])
        .await
        .ok()
        .and_then(|v| v.as_u64())
        .unwrap_or(900)
        .clamp(600, 4000);
    client
        .set_window_size(430, u32::try_from(height).unwrap_or(900) + 20)
        .await
        .expect("resize");
    save(name, client.screenshot().await.expect("a screenshot"));
    client.set_window_size(430, 900).await.expect("resize back");
}

/// Saves a screenshot as `docs/onboarding/<name>.png` (or under `COMMERCE_SCREENSHOTS`).
fn save(name: &str, png: Vec<u8>) {
    let dir = std::env::var("COMMERCE_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/onboarding"));
    std::fs::create_dir_all(&dir).expect("the screenshots' directory");
    std::fs::write(dir.join(format!("{name}.png")), png).expect("the screenshot is saved");
}

async fn click(client: &Client, css: &str) {
    client
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no {css}: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("cannot click {css}: {e}"));
}

/// Clicks a form's submit button and waits for the page it leads to. WebDriver's click may
/// return before the navigation it starts, and a lookup made then would read the old page: the
/// old document's root going stale is the sign the new one replaced it.
async fn submit(client: &Client, css: &str) {
    let old_page = client.find(Locator::Css("html")).await.expect("the page");
    click(client, css).await;
    for _ in 0..200 {
        let stale = old_page.tag_name().await.is_err();
        let loaded = client
            .execute("return document.readyState", vec![])
            .await
            .is_ok_and(|state| state == "complete");
        if stale && loaded {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("submitting with {css} led to no new page within 10 s");
}

async fn fill(client: &Client, css: &str, text: &str) {
    let field = client.find(Locator::Css(css)).await.expect("the field");
    field.clear().await.expect("cleared");
    field.send_keys(text).await.expect("typed");
}

async fn text(client: &Client, css: &str) -> String {
    client
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no {css}: {e}"))
        .text()
        .await
        .expect("its text")
}

async fn log_in_as(client: &Client, base: &str, account: i64) {
    client
        .goto(&format!("{base}/account/login"))
        .await
        .expect("login page");
    submit(
        client,
        &format!("form:has(input[name=account][value=\"{account}\"]) button"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and chromedriver: .ci/browser.sh"]
async fn onboarding_and_withdrawal_in_chromium() {
    // A sandbox inside a withdrawal window (noon of the next Sunday or Thursday in Cairo).
    let now = chrono::Utc::now();
    let window = withdrawal_window(now);
    let at = if window.open {
        now
    } else {
        window.opens_at + chrono::Duration::hours(12)
    };
    let clock = ManualClock::new(at);
    let engine = Engine::builder(Arc::new(MemoryStore::new()))
        .config(sandbox::config())
        .clock(Arc::new(clock))
        .build()
        .expect("valid settings");
    let fixture = sandbox::seed(&engine).await.expect("seeded");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let base = format!("http://{addr}");
    let pages = sandbox::account_pages(&engine, &format!("{base}/api/v1"));
    let app =
        commerce::axum::app(engine).nest_service("/account", commerce::axum::owner_pages(pages));
    tokio::spawn(async move { axum::serve(listener, app).await });

    let (_driver, client) = chromium().await;

    // The newcomer: log in (demo), request API access, approved at once.
    client
        .goto(&format!("{base}/account/"))
        .await
        .expect("pages");
    assert!(
        client
            .current_url()
            .await
            .expect("url")
            .as_str()
            .ends_with("/account/login")
    );
    screenshot(&client, "01-demo-login").await;
    log_in_as(&client, &base, fixture.newcomer.get()).await;
    assert_eq!(text(&client, "#api-status").await, "لسه ما اتطلبش");
    screenshot(&client, "02-api-access").await;
    submit(&client, "form[action=\"/account/access/request\"] button").await;
    assert_eq!(text(&client, "#api-status").await, "شغال");
    screenshot(&client, "03-api-access-approved").await;

    // A key with catalog:read, copied from the page that shows it once.
    client
        .goto(&format!("{base}/account/keys"))
        .await
        .expect("keys");
    fill(&client, "#name", "متجري على شوبيفاي").await;
    click(&client, "input[name=abilities][value=\"catalog:read\"]").await;
    screenshot(&client, "04-new-key-form").await;
    submit(
        &client,
        "form[action=\"/account/keys\"] button[type=submit]",
    )
    .await;
    let key = text(&client, "#new-key").await;
    // A key created in the sandbox is a test key.
    assert!(key.starts_with(commerce::TEST_KEY_PREFIX), "{key}");
    screenshot(&client, "05-key-shown-once").await;

    let me = reqwest::Client::new()
        .get(format!("{base}/api/v1/me"))
        .bearer_auth(&key)
        .send()
        .await
        .expect("GET /api/v1/me");
    assert_eq!(me.status(), 200);
    let body: serde_json::Value =
        serde_json::from_slice(&me.bytes().await.expect("a body")).expect("JSON");
    assert_eq!(body["data"]["id"], fixture.newcomer.get());

    client
        .goto(&format!("{base}/account/keys"))
        .await
        .expect("keys");
    let listed = client.source().await.expect("source");
    assert!(listed.contains("متجري على شوبيفاي") && !listed.contains(&key));
    assert!(
        !listed.contains("لسه ما استخدمش"),
        "the key was used a moment ago"
    );
    screenshot(&client, "06-keys-list").await;

    // Marketer A's wallet: a refusal under the field, then a withdrawal request.
    log_in_as(&client, &base, fixture.marketer_a.get()).await;
    client
        .goto(&format!("{base}/account/wallet"))
        .await
        .expect("wallet");
    screenshot(&client, "07-wallet").await;
    fill(&client, "#amount", "50").await;
    fill(&client, "#wallet_number", "01012345678").await;
    fill(&client, "#wallet_description", "فودافون كاش").await;
    submit(
        &client,
        "form[action=\"/account/wallet/withdrawals\"] button",
    )
    .await;
    assert!(text(&client, "#amount-error").await.contains("الحد الأدنى"));
    screenshot(&client, "08-withdrawal-refused").await;
    fill(&client, "#amount", "100").await;
    submit(
        &client,
        "form[action=\"/account/wallet/withdrawals\"] button",
    )
    .await;
    let page = client.source().await.expect("source");
    assert!(
        page.contains("طلب السحب اتسجل") && page.contains("قيد المراجعة"),
        "{page}"
    );
    assert_eq!(text(&client, "#ready").await, "36.00 جنيه");
    screenshot(&client, "09-withdrawal-requested").await;

    client.close().await.expect("closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and chromedriver: .ci/browser.sh"]
async fn the_api_reference_shows_every_operation_in_chromium() {
    let engine = Engine::builder(Arc::new(MemoryStore::new()))
        .config(sandbox::config())
        .build()
        .expect("valid settings");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(async move { axum::serve(listener, commerce::axum::app(engine)).await });
    let document = reqwest::get(format!("{base}/api/v1/openapi.json"))
        .await
        .expect("GET /api/v1/openapi.json")
        .bytes()
        .await
        .expect("the document");
    let document: serde_json::Value = serde_json::from_slice(&document).expect("JSON");

    let (_driver, client) = chromium().await;
    client
        .goto(&format!("{base}/api/v1/docs"))
        .await
        .expect("the reference page");
    let title = client.title().await.expect("a title");
    assert!(title.contains("Commerce API"), "{title}");
    save(
        "10-api-reference",
        client.screenshot().await.expect("a screenshot"),
    );

    let mut operations = 0;
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("a path item") {
            let id = operation["operationId"].as_str().expect("an operationId");
            let article = client
                .find(Locator::Id(id))
                .await
                .unwrap_or_else(|e| panic!("no element #{id} on the page: {e}"));
            let shown = article.text().await.expect("its text");
            let heading = format!("{} {path}", method.to_uppercase());
            assert!(
                shown.contains(&heading),
                "#{id} does not show {heading}: {shown}"
            );
            let summary = operation["summary"].as_str().expect("a summary");
            assert!(shown.contains(summary), "#{id} does not show {summary:?}");
            operations += 1;
        }
    }
    assert!(operations > 20, "{operations} operations");

    // The table of contents leads to each operation.
    let first = document["paths"]["/api/v1/me"]["get"]["operationId"]
        .as_str()
        .expect("GET /me");
    click(&client, &format!("nav a[href=\"#{first}\"]")).await;
    let url = client.current_url().await.expect("url");
    assert_eq!(url.fragment(), Some(first));

    // Nothing but the page itself was loaded: no script, font, stylesheet or image (the
    // browser's own request for the site's icon aside).
    let loaded = client
        .execute(
            "return performance.getEntriesByType('resource').map(e => e.name)\
             .filter(name => new URL(name).pathname !== '/favicon.ico')",
            vec![],
        )
        .await
        .expect("the resources");
    assert_eq!(loaded, serde_json::json!([]), "the page loaded {loaded}");

    client.close().await.expect("closed");
}
