//! The public API snapshot of each library crate of the workspace, checked in CI.
//!
//! `cargo run -p api-snapshot` builds each crate's rustdoc JSON with the toolchain at hand
//! (stable too: rustdoc's JSON output is unstable, so the build runs with `RUSTC_BOOTSTRAP=1`),
//! lists its public items with the `public-api` crate and compares the list with
//! `public-api/<crate>.txt`; it fails with the difference when they differ.
//! `cargo run -p api-snapshot -- --bless` writes the lists instead: run it after a deliberate
//! change of the surface and commit the files with the change.
//!
//! It also holds the surface to three rules, read from the same rustdoc JSON, bless or not: no
//! glob re-export (`pub use x::*`) among the public items; no public struct with a public
//! field that is not `#[non_exhaustive]` (so a field can be added without breaking a caller,
//! who builds the struct with its constructor); and one public path per item ([`paths`]: an
//! item reached at two paths, a prelude's excepted, is named two ways in docs and callers).
//! [`KNOWN`] lists what breaks them still.

mod paths;

use std::{
    collections::{BTreeMap, BTreeSet},
    env, fs,
    path::{Path, PathBuf},
    process::{Command, ExitCode},
};

/// The crates whose surface is kept, with the features they are documented with (all of them,
/// as docs.rs and `cargo doc --all-features` show them); each after the crates it re-exports,
/// whose paths its own are resolved through.
const CRATES: &[&str] = &[
    "commerce-core",
    "commerce-axum",
    "commerce-warp",
    "commerce-store-sqlx",
    "commerce",
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
    build_rustdoc_json(&workspace)?;
    let mut same = true;
    let mut broken = Vec::new();
    let mut workspace_paths = BTreeMap::new();
    for krate in CRATES {
        let listed = public_api(&target, krate)?;
        let doc = read_rustdoc_json(&target, krate)?;
        broken.extend(surface_rules(&doc));
        let reached = paths::reaches(krate, &doc, &workspace_paths);
        broken.extend(paths::repeated(krate, &reached));
        workspace_paths.insert(krate.replace('-', "_"), reached);
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
    Ok(surface_rules_hold(&broken) && same)
}

/// What breaks the surface's rules still, each as [`surface_rules`] words it: to be made
/// `#[non_exhaustive]` with a constructor, or named item by item. An entry that no longer
/// breaks a rule fails the check too, so that the list only shrinks.
const KNOWN: &[&str] = &[];

/// Whether `broken` (every break of the surface's rules) is exactly [`KNOWN`]; prints the
/// difference otherwise.
fn surface_rules_hold(broken: &[String]) -> bool {
    let broken: BTreeSet<&str> = broken.iter().map(String::as_str).collect();
    let known: BTreeSet<&str> = KNOWN.iter().copied().collect();
    for new in broken.difference(&known) {
        eprintln!("surface rule broken: {new}");
    }
    for gone in known.difference(&broken) {
        eprintln!("no longer broken, drop it from KNOWN in tools/api-snapshot: {gone}");
    }
    broken == known
}

/// Where rustdoc writes the JSON of `krate`.
fn json_path(target: &Path, krate: &str) -> PathBuf {
    target
        .join("doc")
        .join(format!("{}.json", krate.replace('-', "_")))
}

/// The rustdoc JSON of `krate` (built by [`build_rustdoc_json`]).
fn read_rustdoc_json(target: &Path, krate: &str) -> Result<serde_json::Value, String> {
    let json = json_path(target, krate);
    let text = fs::read_to_string(&json).map_err(|e| format!("{}: {e}", json.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", json.display()))
}

/// The breaks of the surface's rules among the items a user of the crate reaches (from its
/// root, through public modules and re-exports): each glob re-export (`glob re-export:
/// <file> pub use <module>::*`) and each struct with a public field that is not
/// `#[non_exhaustive]` (`public fields without #[non_exhaustive]: <path>`).
///
/// Two kinds of item are not looked at, on purpose. An enum's variant with named fields
/// (`StoreError::StockShortfall { .. }`, `Problem::TooLong { max }`) is not a struct: a
/// backend outside the crate builds the store's errors and the engine's callers match on
/// them, which `#[non_exhaustive]` on the variant would forbid; the enums that can grow are
/// `#[non_exhaustive]` themselves. And rustdoc leaves `#[doc(hidden)]` items out of its JSON
/// (`testing::dispatch`, the crate's own test support): they are not the surface.
fn surface_rules(doc: &serde_json::Value) -> Vec<String> {
    let index = &doc["index"];
    let item = |id: &serde_json::Value| {
        let key = match id {
            serde_json::Value::Number(n) => n.to_string(),
            other => other.as_str().unwrap_or_default().to_owned(),
        };
        index.get(key).filter(|item| item["crate_id"] == 0)
    };
    let mut broken = BTreeSet::new();
    let mut seen = BTreeSet::new();
    // (item, the path it is reached by, whether a re-export names it: then it is public
    // whatever its own module's visibility).
    let root = doc["root"].clone();
    let mut queue = vec![(root.clone(), String::new(), true)];
    while let Some((id, path, named)) = queue.pop() {
        let Some(found) = item(&id) else {
            continue;
        };
        if !named && found["visibility"] != "public" {
            continue;
        }
        if !seen.insert(id.to_string()) {
            continue;
        }
        let name = found["name"].as_str().unwrap_or_default();
        let here = match (path.is_empty(), name.is_empty()) {
            (true, _) => name.to_owned(),
            (false, true) => path.clone(),
            (false, false) => format!("{path}::{name}"),
        };
        let inner = &found["inner"];
        if let Some(module) = inner.get("module") {
            // A module's items, under its path (the root's under the crate's name).
            for child in module["items"].as_array().into_iter().flatten() {
                queue.push((child.clone(), here.clone(), false));
            }
        } else if let Some(reexport) = inner.get("use") {
            if reexport["is_glob"] == true {
                broken.insert(format!(
                    "glob re-export: {} pub use {}::*",
                    found["span"]["filename"].as_str().unwrap_or("?"),
                    reexport["source"].as_str().unwrap_or("?")
                ));
                // The glob's target's items, reached under the glob's module.
                if let Some(target) = item(&reexport["id"]) {
                    for child in target["inner"]["module"]["items"]
                        .as_array()
                        .into_iter()
                        .flatten()
                    {
                        queue.push((child.clone(), path.clone(), false));
                    }
                }
            } else if !reexport["id"].is_null() {
                queue.push((reexport["id"].clone(), path.clone(), true));
            }
        } else if let Some(structure) = inner.get("struct") {
            let kind = &structure["kind"];
            let fields: Vec<&serde_json::Value> = match (kind.get("plain"), kind.get("tuple")) {
                (Some(plain), _) => plain["fields"].as_array().into_iter().flatten().collect(),
                (_, Some(tuple)) => tuple.as_array().into_iter().flatten().collect(),
                _ => Vec::new(),
            };
            let public_field = fields
                .iter()
                .filter_map(|field| item(field))
                .any(|field| field["visibility"] == "public");
            let exhaustive = !found["attrs"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|attr| attr == "non_exhaustive");
            if public_field && exhaustive {
                broken.insert(format!("public fields without #[non_exhaustive]: {here}"));
            }
        }
    }
    broken.into_iter().collect()
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
/// crate resolved the shared crates' features anew for each and checked them again). The
/// features are unified across the five, as in an application that uses the facade with the
/// SQL store: commerce-core's snapshot lists what its types have with sqlx's PostgreSQL
/// support on (the ids' `PgHasArrayType`). `RUSTDOCFLAGS` from the environment (CI's
/// `-D warnings`) is kept.
fn build_rustdoc_json(workspace: &Path) -> Result<(), String> {
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
    let json = json_path(target, krate);
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
