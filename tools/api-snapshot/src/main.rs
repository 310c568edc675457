//! The public API snapshot of each library crate of the workspace, checked in CI.
//!
//! `cargo run -p api-snapshot` builds each crate's rustdoc JSON with the toolchain at hand
//! (stable too: rustdoc's JSON output is unstable, so the build runs with `RUSTC_BOOTSTRAP=1`),
//! lists its public items with the `public-api` crate and compares the list with
//! `public-api/<crate>.txt`; it fails with the difference when they differ.
//! `cargo run -p api-snapshot -- --bless` writes the lists instead: run it after a deliberate
//! change of the surface and commit the files with the change.

use std::{
    collections::BTreeSet,
    env, fs,
    path::{Path, PathBuf},
    process::{Command, ExitCode},
};

/// The crates whose surface is kept, with the features they are documented with (all of them,
/// as docs.rs and `cargo doc --all-features` show them).
const CRATES: &[&str] = &[
    "commerce",
    "commerce-core",
    "commerce-axum",
    "commerce-warp",
    "commerce-store-sqlx",
];

/// The command that regenerates the snapshot, printed when the check fails.
const BLESS: &str = "cargo run -p api-snapshot -- --bless";

fn main() -> ExitCode {
    let bless = match env::args().nth(1).as_deref() {
        None => false,
        Some("--bless") => true,
        Some(other) => {
            eprintln!("api-snapshot: unknown argument {other}; usage: api-snapshot [--bless]");
            return ExitCode::FAILURE;
        }
    };
    match run(bless) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!(
                "\nThe public API differs from the snapshot in public-api/ (lines with - are in \
                 the snapshot only, + in the code only).\nIf the change is deliberate, run \
                 `{BLESS}` and commit the updated files with it."
            );
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("api-snapshot: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Checks (or with `bless` writes) every crate's snapshot; `Ok(false)` when one differs.
fn run(bless: bool) -> Result<bool, String> {
    let (workspace, target) = workspace_dirs()?;
    let snapshots = workspace.join("public-api");
    rustdoc_json(&workspace)?;
    let mut same = true;
    for krate in CRATES {
        let listed = public_api(&target, krate)?;
        let file = snapshots.join(format!("{krate}.txt"));
        if bless {
            fs::create_dir_all(&snapshots).map_err(|e| format!("{}: {e}", snapshots.display()))?;
            fs::write(&file, &listed).map_err(|e| format!("{}: {e}", file.display()))?;
            println!("{}: {} items", file.display(), listed.lines().count());
            continue;
        }
        let kept = fs::read_to_string(&file).unwrap_or_default();
        if kept == listed {
            println!(
                "{krate}: public API as in the snapshot ({} items)",
                listed.lines().count()
            );
        } else {
            same = false;
            eprintln!("{krate}: public API differs from {}:", file.display());
            print_difference(&kept, &listed);
        }
    }
    Ok(same)
}

/// The workspace root and the target directory, as cargo sees them.
fn workspace_dirs() -> Result<(PathBuf, PathBuf), String> {
    let output = Command::new(cargo())
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let dir = |key: &str| {
        metadata[key]
            .as_str()
            .map(PathBuf::from)
            .ok_or_else(|| format!("cargo metadata has no {key}"))
    };
    Ok((dir("workspace_root")?, dir("target_directory")?))
}

/// The rustdoc JSON of every crate of [`CRATES`], in one `cargo doc` run with all features:
/// one feature resolution for all of them, so each dependency is checked once (a run per
/// crate resolved the shared crates' features anew for each and checked them again).
/// `RUSTDOCFLAGS` from the environment (CI's `-D warnings`) is kept.
fn rustdoc_json(workspace: &Path) -> Result<(), String> {
    let mut flags = env::var("RUSTDOCFLAGS").unwrap_or_default();
    flags.push_str(" -Z unstable-options --output-format json");
    let mut command = Command::new(cargo());
    command
        .current_dir(workspace)
        // rustdoc's JSON output is unstable: this lets the stable toolchain write it, for this
        // build only.
        .env("RUSTC_BOOTSTRAP", "1")
        .env("RUSTDOCFLAGS", flags.trim())
        .args(["doc", "--quiet", "--no-deps", "--lib", "--all-features"]);
    for krate in CRATES {
        command.args(["-p", krate]);
    }
    let status = command.status().map_err(|e| format!("cargo doc: {e}"))?;
    if !status.success() {
        return Err(format!("cargo doc failed ({status})"));
    }
    Ok(())
}

/// One crate's public API from its rustdoc JSON, one item a line, sorted.
fn public_api(target: &Path, krate: &str) -> Result<String, String> {
    let json = target
        .join("doc")
        .join(format!("{}.json", krate.replace('-', "_")));
    check_format(&json)?;
    // Blanket impls (`impl<T> From<T> for T`, `Instrument`, ...) are left out: they follow from
    // the rest and would list every dependency's blanket traits on every type. Auto traits
    // (`Send`, `Sync`, ...) stay: losing one breaks users.
    let api = public_api::Builder::from_rustdoc_json(&json)
        .omit_blanket_impls(true)
        .build()
        .map_err(|e| format!("{}: {e}", json.display()))?;
    let mut text = String::new();
    for item in api.items() {
        text.push_str(&item.to_string());
        text.push('\n');
    }
    Ok(text)
}

/// The rustdoc JSON format the pinned `public-api` release reads (Rust 1.95's rustdoc).
const FORMAT_VERSION: u64 = 57;

/// Fails with the way out when the toolchain writes another rustdoc JSON format than the
/// pinned `public-api` release reads.
fn check_format(json: &Path) -> Result<(), String> {
    let text = fs::read_to_string(json).map_err(|e| format!("{}: {e}", json.display()))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", json.display()))?;
    match doc["format_version"].as_u64() {
        Some(FORMAT_VERSION) => Ok(()),
        found => Err(format!(
            "{} is rustdoc JSON format {found:?}, the pinned public-api release reads format \
             {FORMAT_VERSION}: pin the public-api release for this toolchain in \
             tools/api-snapshot/Cargo.toml, update FORMAT_VERSION, then run `{BLESS}`",
            json.display()
        )),
    }
}

/// The lines only in the snapshot (`-`) and only in the code (`+`); the lists are sorted and
/// every item is one line, so a set difference is the whole story.
fn print_difference(kept: &str, listed: &str) {
    let kept: BTreeSet<&str> = kept.lines().collect();
    let listed: BTreeSet<&str> = listed.lines().collect();
    for line in kept.difference(&listed) {
        eprintln!("- {line}");
    }
    for line in listed.difference(&kept) {
        eprintln!("+ {line}");
    }
    if kept == listed {
        eprintln!("  (the same items, in another order or count)");
    }
}

/// The cargo that runs this tool (`CARGO`), so the snapshot is built by the same toolchain.
fn cargo() -> String {
    env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}
