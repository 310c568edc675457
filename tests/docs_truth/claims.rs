//! The claims a machine can read, against what they are about: the facade's features, the
//! examples, the environment variables the code reads, the OpenAPI document's operations and
//! error answers, the steps of `.ci/run`, the toolchain, the webhook retry schedule, the
//! abilities and sides, and the `Idempotency-Key`s the pages use.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chrono::{DateTime, TimeDelta};
use commerce::ErrorCode;
use commerce::domain::delivery::RETRY_SCHEDULE;
use serde_json::Value;

use super::json::{examples, without_elisions};
use super::{code, codes, doc, document, pages, repo, table};

/// `text` with every run of white space one space (a claim may be wrapped anywhere).
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `name = ...` keys of the section `[section]` of a TOML file.
fn toml_keys(toml: &str, section: &str) -> BTreeSet<String> {
    toml.lines()
        .skip_while(|l| l.trim() != format!("[{section}]"))
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .filter(|l| !l.starts_with('#') && !l.starts_with(' ') && l.contains(" = "))
        .map(|l| l.split(" = ").next().unwrap().trim().to_owned())
        .collect()
}

/// Every `"<prefix>NAME"` of `text` whose NAME is an environment variable's name.
fn quoted_after(text: &str, prefix: &str, into: &mut BTreeSet<String>) {
    for (at, _) in text.match_indices(prefix) {
        let rest = &text[at + prefix.len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        let closed = rest[name.len()..].starts_with(['"', ':']);
        if closed && name.starts_with(|c: char| c.is_ascii_uppercase()) {
            into.insert(name);
        }
    }
}

/// The files under `dir` (recursively, `target/` left out) whose names end with `suffix`.
fn files(dir: &Path, suffix: &str, into: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                files(&path, suffix, into);
            }
        } else if path.to_string_lossy().ends_with(suffix) {
            into.push(path);
        }
    }
}

#[test]
fn the_readme_names_the_facades_features() {
    let mut features = toml_keys(&repo("Cargo.toml"), "features");
    assert!(features.remove("default"));
    let readme = repo("README.md");
    let pulled: BTreeSet<String> = table(&readme, &["features", "adds to the engine", "crates"])
        .iter()
        .filter(|row| row[0] != "none")
        .map(|row| code(&row[0]).to_owned())
        .collect();
    assert_eq!(
        pulled, features,
        "the README's table of what each feature pulls in"
    );
    let crates = table(&readme, &["crate", "what"]);
    let facade = crates
        .iter()
        .find(|row| row[0].starts_with("`commerce` (root)"))
        .expect("the facade's row");
    assert_eq!(
        codes(&facade[1]),
        features,
        "the facade's features in the crate table"
    );
}

#[test]
fn the_readme_names_the_examples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let stems = |dir: &str| -> BTreeSet<String> {
        std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect()
    };
    let facade = stems("examples");
    let sqlx = stems("commerce-store-sqlx/examples");
    let readme = repo("README.md");
    let mut named = BTreeSet::new();
    for (prefix, end) in [("--example ", ' '), ("examples/", '.')] {
        for (at, _) in readme.match_indices(prefix) {
            let rest = &readme[at + prefix.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if rest[name.len()..].starts_with(end) || rest[name.len()..].starts_with('\n') {
                named.insert(name);
            }
        }
    }
    for name in &named {
        assert!(
            facade.contains(name) || sqlx.contains(name),
            "the README names the example {name}, which does not exist"
        );
    }
    for name in &facade {
        assert!(
            named.contains(name),
            "the README never names examples/{name}.rs"
        );
    }
    for block in repo("Cargo.toml").split("[[example]]").skip(1) {
        let name = block
            .split("name = \"")
            .nth(1)
            .and_then(|n| n.split('"').next())
            .unwrap();
        assert!(
            facade.contains(name),
            "Cargo.toml declares the example {name}"
        );
    }
}

/// The variables a figment `Env::prefixed` of `text` reads: its prefix and the
/// upper-cased name of each field of the structs that derive `Deserialize` in the same file
/// (`addr` is `COMMERCE_ADDR`); a field holding settings of their own (`engine: Config`) is
/// the prefix of its fields, `COMMERCE_ENGINE__`.
fn figment_variables(text: &str, into: &mut BTreeSet<String>) {
    let Some(prefix) = text
        .split("Env::prefixed(\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
    else {
        return;
    };
    const NESTED: [&str; 3] = ["Config", "PoolSettings", "DispatcherConfig"];
    for derived in text.split("#[derive(").skip(1) {
        let head = derived.split(')').next().unwrap_or_default();
        if !head.contains("Deserialize") {
            continue;
        }
        let Some(body) = derived
            .split_once("struct ")
            .and_then(|(_, rest)| rest.split_once('{'))
            .and_then(|(_, rest)| rest.split_once("\n}"))
            .map(|(body, _)| body)
        else {
            continue;
        };
        for line in body.lines().map(str::trim) {
            let Some((field, kind)) = line.split_once(": ") else {
                continue;
            };
            if line.starts_with("//") || line.starts_with('#') || field.contains(' ') {
                continue;
            }
            let name = format!("{prefix}{}", field.to_uppercase());
            let kind = kind.trim_end_matches(',');
            if NESTED.contains(&kind) {
                into.insert(format!("{name}__"));
            } else {
                into.insert(name);
            }
        }
    }
}

#[test]
fn figment_fields_are_read_as_prefixed_variables() {
    let mut found = BTreeSet::new();
    figment_variables(
        "Figment::new().merge(Env::prefixed(\"APP_\").split(\"__\"))\n\
         #[derive(Debug, Deserialize)]\nstruct Settings {\n    /// Doc: with a colon.\n    \
         addr: String,\n    #[serde(default)]\n    engine: Config,\n}\n\
         #[derive(Debug)]\nstruct Other {\n    left_out: u8,\n}\n",
        &mut found,
    );
    let expected: BTreeSet<String> = ["APP_ADDR", "APP_ENGINE__"].map(String::from).into();
    assert_eq!(found, expected);
}

/// Every environment variable a program of the repository reads by name (`env::var` and
/// `env::var_os` of a string literal, the benches' `env_or`, clap's `env = "..."`, the fields
/// of the settings a figment `Env::prefixed` reads, the CI scripts' `${NAME:-...}` and
/// `${NAME:?...}`) is in the README, in its table of variables; cargo's own (`CARGO...`) are
/// cargo's. And every `COMMERCE_` variable of that table is read by one of them: the table is
/// every variable, and only those.
#[test]
fn every_environment_variable_read_is_in_the_readme() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = Vec::new();
    for dir in [
        "src",
        "tests",
        "dev",
        "examples",
        "tools",
        "commerce-core",
        "commerce-axum",
        "commerce-warp",
        "commerce-store-sqlx",
    ] {
        files(&root.join(dir), ".rs", &mut sources);
    }
    let mut read = BTreeSet::new();
    for path in &sources {
        let text = std::fs::read_to_string(path).unwrap();
        for prefix in ["env::var(\"", "env::var_os(\"", "env_or(\"", "env = \""] {
            quoted_after(&text, prefix, &mut read);
        }
        // The programs' settings (the library's docs show the same call on its types).
        let program = ["examples", "src/bin"]
            .iter()
            .any(|dir| path.starts_with(root.join(dir)));
        if program {
            figment_variables(&text, &mut read);
        }
    }
    let mut scripts = Vec::new();
    files(&root.join(".ci"), ".sh", &mut scripts);
    scripts.push(root.join(".ci/run"));
    for path in &scripts {
        quoted_after(&std::fs::read_to_string(path).unwrap(), "${", &mut read);
    }
    read.retain(|name| !name.starts_with("CARGO"));
    assert!(
        read.len() >= 30,
        "only {} variables found: {read:?}",
        read.len()
    );
    let readme = repo("README.md");
    let rows = table(&readme, &["variable", "read by", "meaning"]);
    let listed: BTreeSet<String> = rows.iter().flat_map(|row| codes(&row[0])).collect();
    // A variable is listed by its name, a prefix of settings by `PREFIX<FIELD>`.
    let in_table = |name: &String| {
        listed.contains(name)
            || (name.ends_with("__") && listed.contains(&format!("{name}<FIELD>")))
    };
    let missing: Vec<&String> = read.iter().filter(|name| !in_table(name)).collect();
    assert!(
        missing.is_empty(),
        "read but not in the README's table of variables: {missing:?}"
    );
    let unread: Vec<&String> = listed
        .iter()
        .filter(|name| name.starts_with("COMMERCE_"))
        .filter(|name| !read.contains(name.trim_end_matches("<FIELD>")))
        .collect();
    assert!(
        unread.is_empty(),
        "in the README's table of variables but read by no program: {unread:?}"
    );
}

/// "the document's N operations but `GET /api/v1/openapi.json` ..., M with marketer A's key
/// and K with the supplier's": N is the document's count, K the operations of the supplier's
/// run of `.ci/schemathesis.sh`, M the others but the document itself.
#[test]
fn the_readmes_operation_counts_are_the_documents() {
    let document = document();
    let operations: Vec<String> = document["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| item.as_object().unwrap().keys().map(move |_| path.clone()))
        .collect();
    let script = repo(".ci/schemathesis.sh");
    let supply = script
        .split("SUPPLY_PATHS='/api/v1/(")
        .nth(1)
        .and_then(|rest| rest.split(")'").next())
        .expect("SUPPLY_PATHS in .ci/schemathesis.sh");
    let supplier = operations
        .iter()
        .filter(|path| {
            supply
                .split('|')
                .any(|alternative| path.starts_with(&format!("/api/v1/{alternative}")))
        })
        .count();
    let readme = flat(&repo("README.md"));
    let claims = [
        format!(
            "the document's {} operations but `GET /api/v1/openapi.json`",
            operations.len()
        ),
        format!(
            "{} with marketer A's key and {supplier} with the supplier's",
            operations.len() - supplier - 1
        ),
    ];
    for claim in claims {
        assert!(readme.contains(&claim), "the README should say {claim:?}");
    }
}

/// The steps of `.ci/run` are the README's table of them, in the order the file names them
/// (the checks that run in the background included), and every script it runs is named there.
#[test]
fn the_readmes_ci_steps_are_the_scripts() {
    let run = repo(".ci/run");
    let steps: Vec<String> = run
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("step "))
        .map(|s| s.trim_matches('"').to_owned())
        .filter(|s| s != "done")
        .collect();
    let readme = repo("README.md");
    let documented: Vec<String> = table(&readme, &["step", "what"])
        .iter()
        .map(|row| code(&row[0]).to_owned())
        .collect();
    assert_eq!(documented, steps, "the README's table of .ci/run's steps");
    for line in run.lines() {
        for word in line.split_whitespace() {
            if word.starts_with(".ci/") && word.ends_with(".sh") && !line.starts_with('#') {
                assert!(
                    readme.contains(&format!("`{word}`")),
                    "the README does not name {word}, which .ci/run runs"
                );
            }
        }
    }
}

/// The README's toolchain is the workspace's `rust-version`.
#[test]
fn the_readmes_toolchain_is_the_rust_version() {
    let rust_version = env!("CARGO_PKG_RUST_VERSION");
    assert!(
        !rust_version.is_empty(),
        "the facade declares its rust-version"
    );
    let readme = repo("README.md");
    assert!(
        readme.contains(&format!("Rust toolchain ({rust_version} or newer)")),
        "the README names {rust_version} as the oldest toolchain"
    );
}

/// The webhook retry schedule as the pages state it, and the failed delivery they show took
/// all of it.
#[test]
fn the_retry_schedule_is_the_codes() {
    let long = |d: &TimeDelta| match d.num_seconds() {
        s if s < 60 => format!("{s} seconds"),
        s if s < 3600 => format!("{} minutes", s / 60),
        s => format!("{} hours", s / 3600),
    };
    let short = |d: &TimeDelta| match d.num_seconds() {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s => format!("{} h", s / 3600),
    };
    let join = |f: &dyn Fn(&TimeDelta) -> String| {
        RETRY_SCHEDULE.iter().map(f).collect::<Vec<_>>().join(", ")
    };
    let webhooks = doc("webhooks.md");
    let stated = format!(
        "counted from the failed attempt: {}; after that",
        join(&long)
    );
    assert!(flat(&webhooks).contains(&stated), "webhooks.md: {stated:?}");
    let stated = format!("retried after {})", join(&short));
    assert!(
        flat(&repo("README.md")).contains(&stated),
        "README: {stated:?}"
    );

    let failed = examples(&webhooks)
        .into_iter()
        .find(|e| e.text.contains("\"status\":\"failed\"") && e.text.contains("\"attempts\""))
        .expect("the failed delivery of webhooks.md");
    let answer: Value = serde_json::from_str(&without_elisions(&failed.text)).unwrap();
    let delivery = &answer["data"][0];
    assert_eq!(
        delivery["attempts"],
        RETRY_SCHEDULE.len() + 1,
        "the first and every retry"
    );
    let at = |field: &str| DateTime::parse_from_rfc3339(delivery[field].as_str().unwrap()).unwrap();
    let total: TimeDelta = RETRY_SCHEDULE.iter().sum();
    assert!(
        at("last_attempt_at") - at("created_at") >= total,
        "webhooks.md:{}: the last attempt comes {total} after the event at the earliest",
        failed.line
    );
}

/// authentication.md's abilities and sides are the document's: each ability grants the
/// operations that need it, and each side may call the operations that serve it.
#[test]
fn the_abilities_and_sides_are_the_documents() {
    let document = document();
    // (METHOD /path without /api/v1, its abilities, the sides it serves; None: no key)
    let mut operations = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let name = format!("{} {}", method.to_uppercase(), &path["/api/v1".len()..]);
            let abilities: BTreeSet<String> = operation["x-abilities"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_owned())
                .collect();
            let described = operation["description"].as_str().unwrap();
            let sides: Option<&[&str]> = if described.contains("Serves every account side.") {
                Some(&["marketer", "supplier", "shipping"])
            } else if described.contains("Serves marketers and suppliers.") {
                Some(&["marketer", "supplier"])
            } else if described.contains("Serves marketers only.") {
                Some(&["marketer"])
            } else if described.contains("Serves suppliers only.") {
                Some(&["supplier"])
            } else {
                None
            };
            operations.push((name, abilities, sides));
        }
    }
    let named = |cell: &str| -> BTreeSet<String> {
        codes(cell)
            .into_iter()
            .filter(|c| c.starts_with(|c: char| c.is_ascii_uppercase()) && c.contains(" /"))
            .collect()
    };
    let page = doc("authentication.md");
    let rows = table(&page, &["Ability", "Grants"]);
    let mut abilities = BTreeSet::new();
    for (_, needed, _) in &operations {
        abilities.extend(needed.iter().cloned());
    }
    let listed: BTreeSet<String> = rows.iter().map(|r| code(&r[0]).to_owned()).collect();
    assert_eq!(listed, abilities, "authentication.md's abilities");
    for row in &rows {
        let ability = code(&row[0]);
        let granted: BTreeSet<String> = operations
            .iter()
            .filter(|(_, needed, _)| needed.contains(ability))
            .map(|(name, ..)| name.clone())
            .collect();
        assert_eq!(named(&row[1]), granted, "what {ability} grants");
    }
    let serving = |side: &str| -> BTreeSet<String> {
        operations
            .iter()
            .filter(|(_, _, sides)| sides.is_some_and(|s| s.contains(&side)))
            .map(|(name, ..)| name.clone())
            .collect()
    };
    let keyed: BTreeSet<String> = operations
        .iter()
        .filter(|(.., sides)| sides.is_some())
        .map(|(name, ..)| name.clone())
        .collect();
    let sides = table(&page, &["Side", "May call"]);
    let side = |name: &str| {
        sides
            .iter()
            .find(|r| code(&r[0]) == name)
            .unwrap_or_else(|| panic!("the side {name}"))[1]
            .clone()
    };
    assert_eq!(
        named(&side("supplier")),
        serving("supplier"),
        "a supplier's endpoints"
    );
    assert_eq!(
        named(&side("shipping")),
        serving("shipping"),
        "a shipping company's"
    );
    // The marketer's row names what it may not call.
    let refused: BTreeSet<String> = keyed.difference(&serving("marketer")).cloned().collect();
    assert_eq!(
        named(&side("marketer")),
        refused,
        "what a marketer may not call"
    );
}

/// docs/README.md says which error answers the document lists under each operation and which
/// it lists under none: those are the codes whose status no operation has.
#[test]
fn the_documents_error_answers_are_as_the_reference_says() {
    let document = document();
    let mut listed = BTreeSet::new();
    for item in document["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            for status in operation["responses"].as_object().unwrap().keys() {
                let status: u16 = status.parse().unwrap();
                if status >= 400 {
                    listed.insert(status);
                }
            }
        }
    }
    let reference = flat(&doc("README.md"));
    let section = reference
        .split("## The OpenAPI document")
        .nth(1)
        .expect("docs/README.md's OpenAPI section");
    for status in &listed {
        assert!(
            section.contains(&status.to_string()),
            "{status} is not named"
        );
    }
    let mut unlisted = 0;
    for error in ErrorCode::ALL {
        let status = error.status().as_u16();
        if !listed.contains(&status) {
            let named = format!("{status} `{}`", error.as_str());
            assert!(
                section.contains(&named),
                "docs/README.md should say {named:?} is unlisted"
            );
            unlisted += 1;
        }
    }
    assert!(unlisted > 0, "every status is listed: say so instead");
}

/// The pages read in order work in order: no `Idempotency-Key` and no `external_reference` of
/// a request is used by two pages (the second page's request would be a 409).
#[test]
fn no_two_pages_send_the_same_idempotency_key_or_reference() {
    let mut keys: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut references: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (page, text) in pages() {
        for line in text.lines() {
            if let Some(key) = line.split("-H 'Idempotency-Key: ").nth(1) {
                let key = key.split('\'').next().unwrap().to_owned();
                keys.entry(key).or_default().insert(page.clone());
            }
            let request = line.contains("-d '") || line.contains("BODY='");
            if let Some(reference) = line.split("\"external_reference\":\"").nth(1)
                && request
            {
                let reference = reference.split('"').next().unwrap().to_owned();
                references
                    .entry(reference)
                    .or_default()
                    .insert(page.clone());
            }
        }
    }
    assert!(keys.len() >= 3, "{keys:?}");
    for (what, uses) in [
        ("Idempotency-Key", &keys),
        ("external_reference", &references),
    ] {
        for (value, pages) in uses {
            assert_eq!(pages.len(), 1, "the {what} {value:?} is sent by {pages:?}");
        }
    }
}

/// The string literals of `text`, in order (no escapes inside: the names read here have none).
fn literals(text: &str) -> Vec<&str> {
    text.split('"').skip(1).step_by(2).collect()
}

/// The `concern` values of the store spans: the names `Concern::name` gives, read from its
/// match (whose arms the compiler makes cover every concern, so long as it has no `_` arm).
fn concerns() -> BTreeSet<String> {
    let hook = repo("commerce-core/src/store/hook.rs");
    let body = hook
        .split("pub fn name(self) -> &'static str {")
        .nth(1)
        .and_then(|rest| rest.split("\n    }\n").next())
        .expect("Concern::name in commerce-core/src/store/hook.rs");
    assert!(
        !body.contains("_ =>"),
        "Concern::name has a catch-all arm: its arms no longer list every concern"
    );
    let arms: Vec<&str> = body.lines().filter(|l| l.contains(" => ")).collect();
    let variants = hook
        .split("pub enum Concern {")
        .nth(1)
        .and_then(|rest| rest.split('}').next())
        .expect("enum Concern")
        .lines()
        .filter(|l| l.trim().ends_with(',') && !l.trim().starts_with("//"))
        .count();
    assert_eq!(arms.len(), variants, "one arm of Concern::name per concern");
    arms.iter()
        .flat_map(|arm| literals(arm))
        .map(str::to_owned)
        .collect()
}

/// The messages of the `INFO` events of target `commerce_core::observe`: the message of each
/// `tracing::info!` of observe.rs, and where that message is the argument `{what}`, the
/// literals the callers pass for it (`observe::withdrawal(w, "withdrawal requested")`).
fn observe_events() -> BTreeSet<String> {
    let observe = repo("commerce-core/src/observe.rs");
    let mut sources = Vec::new();
    files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("commerce-core/src"),
        ".rs",
        &mut sources,
    );
    let mut events = BTreeSet::new();
    let mut calls = 0;
    for (at, _) in observe.match_indices("tracing::info!(") {
        calls += 1;
        let call = &observe[at..];
        let call = &call[..call.find(");").expect("a closed call")];
        let message = *literals(call).last().expect("a message");
        let Some(argument) = message.strip_prefix('{').and_then(|m| m.strip_suffix('}')) else {
            events.insert(message.to_owned());
            continue;
        };
        // The function this call is in, and the literals its callers pass as `argument`.
        let function = observe[..at]
            .rsplit("fn ")
            .next()
            .and_then(|f| f.split('(').next())
            .expect("the enclosing function");
        let signature = observe[..at].rsplit("fn ").next().unwrap();
        assert!(
            signature.contains(&format!("{argument}: &'static str")),
            "observe::{function} takes its message {argument} as a literal"
        );
        let mut passed = 0;
        for path in &sources {
            let source = std::fs::read_to_string(path).unwrap();
            for (call_at, _) in source.match_indices(&format!("observe::{function}(")) {
                let call = &source[call_at..];
                let call = &call[..call.find(')').expect("a closed call")];
                if let Some(message) = literals(call).last() {
                    events.insert((*message).to_owned());
                    passed += 1;
                }
            }
        }
        assert!(passed > 0, "no caller of observe::{function} found");
    }
    assert!(calls >= 4, "only {calls} events found in observe.rs");
    events
}

/// The README's list of the `concern` values of the store spans, and of the `INFO` events of
/// `commerce_core::observe`, are the code's.
#[test]
fn the_readmes_concerns_and_events_are_the_codes() {
    let readme = flat(&repo("README.md"));
    // "**`commerce.store`** ... `concern` (`accounts`, `catalog`, ...) and `operation`"
    let documented = readme
        .split("**`commerce.store`**")
        .nth(1)
        .and_then(|bullet| bullet.split("`concern` (").nth(1))
        .and_then(|rest| rest.split(')').next())
        .map(codes)
        .expect("the README's commerce.store bullet lists the `concern` values");
    assert_eq!(
        documented,
        concerns(),
        "the README's `concern` values (the commerce.store bullet)"
    );
    // "**Events** (`INFO`, target `commerce_core::observe`): `order placed`, `order moved`
    // (`from`, `to`, `by` = `api` ... `platform` for `Operator::move_order*`), ..., with ids"
    let bullet = readme
        .split("**Events** (`INFO`, target `commerce_core::observe`):")
        .nth(1)
        .expect("the README's events bullet")
        .split(", with ids")
        .next()
        .unwrap();
    // The top-level names: those outside parentheses.
    let mut depth = 0;
    let mut outside = String::new();
    for c in bullet.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => outside.push(c),
            _ => {}
        }
    }
    assert_eq!(
        codes(&outside),
        observe_events(),
        "the README's INFO events (the Events bullet)"
    );
}

#[test]
fn the_concerns_and_events_are_read_from_the_code() {
    let concerns = concerns();
    assert!(concerns.contains("supply") && concerns.contains("webhooks"));
    assert_eq!(concerns.len(), 8, "{concerns:?}");
    let events = observe_events();
    for event in [
        "order placed",
        "order moved",
        "quote decided",
        "withdrawal requested",
        "withdrawal decided",
    ] {
        assert!(events.contains(event), "{event} in {events:?}");
    }
}
