//! The sandbox server binary's command line and shutdown, run as a user runs it: `--help` and
//! `--version` answer and exit 0, an unknown argument or a non-loopback address without
//! `--public` is refused with exit status 2, and SIGTERM stops a running sandbox with exit 0.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn sandbox() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_commerce-sandbox"));
    command
        .env_remove("COMMERCE_ADDR")
        .env_remove("COMMERCE_DATABASE_URL")
        .env("RUST_LOG", "warn");
    command
}

fn run(args: &[&str]) -> Output {
    sandbox().args(args).output().expect("the sandbox runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_and_version_answer() {
    let help = run(&["--help"]);
    assert!(help.status.success(), "{help:?}");
    let shown = text(&help.stdout);
    for expected in [
        "The sandbox server",
        "Usage: commerce-sandbox [OPTIONS]",
        "--addr <HOST:PORT>",
        "[env: COMMERCE_ADDR=]",
        "[default: 127.0.0.1:8080]",
        "--public",
        "--database-url <URL>",
        "[env: COMMERCE_DATABASE_URL=]",
        "--version",
    ] {
        assert!(
            shown.contains(expected),
            "--help lacks {expected:?}:\n{shown}"
        );
    }
    let version = run(&["--version"]);
    assert!(version.status.success(), "{version:?}");
    assert_eq!(
        text(&version.stdout).trim(),
        format!("commerce-sandbox {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn unknown_arguments_and_public_addresses_without_public_are_refused() {
    let unknown = run(&["--adress", "127.0.0.1:9000"]);
    assert_eq!(unknown.status.code(), Some(2), "{unknown:?}");
    let said = text(&unknown.stderr);
    assert!(said.contains("unexpected argument '--adress'"), "{said}");
    assert!(said.contains("--addr"), "a suggestion: {said}");

    let stray = run(&["serve"]);
    assert_eq!(stray.status.code(), Some(2), "{stray:?}");

    let bad = run(&["--addr", "localhost"]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");

    let public = run(&["--addr", "0.0.0.0:0"]);
    assert_eq!(public.status.code(), Some(2), "{public:?}");
    assert!(text(&public.stderr).contains("refusing to listen on 0.0.0.0:0"));
    // The environment fallback is checked the same way.
    let from_env = sandbox()
        .env("COMMERCE_ADDR", "0.0.0.0:0")
        .output()
        .expect("the sandbox runs");
    assert_eq!(from_env.status.code(), Some(2), "{from_env:?}");
}

/// Started on a free port, it answers; SIGTERM then stops it with exit status 0 (before,
/// only ctrl-c did, and SIGTERM killed it).
#[test]
fn sigterm_drains_and_stops_the_sandbox() {
    let mut child = sandbox()
        .args(["--addr", "127.0.0.1:0"])
        // Empty: no database, in memory.
        .env("COMMERCE_DATABASE_URL", "")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the sandbox starts");
    let mut lines = BufReader::new(child.stdout.take().expect("its stdout")).lines();
    let banner = lines
        .next()
        .expect("a first line")
        .expect("a readable line");
    let addr = banner
        .strip_prefix("Sandbox API on http://")
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("the banner names the address: {banner}"))
        .to_owned();
    assert!(
        banner.ends_with("(in-memory store; data is lost on exit)"),
        "{banner}"
    );
    // Keep reading its output so that it never blocks on a full pipe.
    let rest = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>());

    let mut client = TcpStream::connect(&addr).expect("the sandbox listens");
    client
        .write_all(b"GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk_demo_marketer\r\nConnection: close\r\n\r\n")
        .expect("a request");
    let mut answer = String::new();
    client.read_to_string(&mut answer).expect("an answer");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child's status") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the sandbox did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "exit status after SIGTERM: {status:?}");
    let printed = rest.join().expect("the output");
    assert_eq!(printed.last().map(String::as_str), Some("Sandbox stopped."));
}
