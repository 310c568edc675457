//! The crate's layers, checked from its source (ARCHITECTURE.md, "Layers inside
//! `commerce-core`", names these tests):
//!
//! - every module of `commerce-core/src` is placed in one layer of [`LAYERS`]
//!   (`every_module_has_a_layer`); a module is a top-level module, or a file of `domain/`,
//!   `web/`, `cache/`, `render/` or `webhooks/` ([`SPLIT_FOLDERS`]), since `domain/` holds
//!   the base rules, the rules a backend applies and the operations that call the store, and
//!   the caches', rendering's and webhooks' files sit in different layers;
//! - no module cycle (`the_top_level_modules_form_no_cycle`);
//! - each layer imports only its own layer and the layers below it, and the base only the
//!   base (`no_module_imports_a_layer_it_must_not`), but for the imports listed in [`UPWARD`]
//!   (at most [`MAX_UPWARD`]), which are all the imports that run up
//!   (`imports_run_up_the_layers_only_where_listed`); each layer's rule fails on a planted
//!   violation (`every_layer_has_a_rule_that_fails_on_a_planted_violation`), and the top
//!   layer's rule is that nothing imports the sandbox (`nothing_imports_the_sandbox`);
//! - no circle of imports among source files (`no_circle_of_imports_among_source_files`);
//! - no file under `store/` reaches `render/wire`, `webhooks/events` (the webhook renderer) or
//!   `render/messages`, directly or through any other module, and the SQL store names nothing of
//!   `commerce_core` that does (`no_storage_file_reaches_rendering_even_through_another_module`,
//!   `the_sql_store_uses_nothing_of_commerce_core_that_renders`,
//!   `a_planted_indirect_import_of_rendering_is_caught`);
//! - no source file of the workspace outside `tests/` is over [`MAX_LINES`] lines
//!   (`no_source_file_is_over_700_lines`);
//! - a module with children is `x/mod.rs`, never `x.rs` beside `x/` (`one_module_file_style`).
//!
//! A module's dependencies are the modules its code names through `crate::`
//! (`use crate::store::Store`, `crate::money::round_money(..)`, `use crate::{a, b}`,
//! `crate::domain::pricing::price`, and the crate-root re-exports such as `crate::Engine`).
//! Comments and doc comments do not count: an intra-doc link is not a dependency. `testing`
//! (test support) and `lib.rs` are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Module → the modules it depends on.
type Graph = BTreeMap<String, BTreeSet<String>>;

fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The folders whose files are modules of their own in the graph: `domain/` holds the pure
/// rules (pricing, earnings, delivery decisions, edits, filters, ...), the rules a backend
/// applies inside its operations (`admission`) and the operations that call the store; `web/`
/// holds the HTTP entry's files; `cache/` holds the engine's caches and the state the ways in
/// share, and a service's seen pulls; `render/` the views, texts and request ids that the
/// ways in and the services render; `webhooks/` holds the dispatcher and its services, and
/// the events' renderer.
const SPLIT_FOLDERS: &[&str] = &["cache", "domain", "render", "web", "webhooks"];

/// The module a file belongs to: its top-level module (`api/orders.rs` → `api`, `engine.rs` →
/// `engine`), or for a file of a [`SPLIT_FOLDERS`] folder that folder and the file's own
/// module (`domain/pricing.rs` → `domain::pricing`, `web/routes/table.rs` → `web::routes`,
/// `domain/mod.rs` → `domain`).
fn module_of(file: &Path) -> String {
    let relative = file.strip_prefix(source_dir()).expect("under src");
    let mut parts = relative.components().map(|c| {
        c.as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned()
    });
    let first = parts.next().expect("a component");
    match parts.next() {
        Some(second) if SPLIT_FOLDERS.contains(&first.as_str()) && second != "mod" => {
            format!("{first}::{second}")
        }
        _ => first,
    }
}

/// The code of a file without its comments (line comments, doc comments).
fn code_of(source: &str) -> String {
    source
        .lines()
        .map(|line| match line.find("//") {
            // `//` inside a string literal (a URL) is kept; a comment is dropped.
            Some(at) if line[..at].matches('"').count() % 2 == 0 => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A file's code (comments dropped, [`code_of`]) without its test code: each item under
/// `#[cfg(test)]` is dropped to its end, and what follows it is kept. An item's end: the brace
/// that closes its body (`mod tests { .. }`, a `fn`, an `impl`), its `;` (`mod more;`, a `use`,
/// a `const`, a tuple struct), or for anything else (a statement, a field, a variant) its first
/// `,` or `;` outside brackets. String, raw string and character literals are skipped while
/// the end is looked for, so a brace in a literal does not count.
fn without_tests(source: &str) -> String {
    const ATTRIBUTE: &str = "#[cfg(test)]";
    let code = code_of(source);
    let mut kept = String::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find(ATTRIBUTE) {
        kept.push_str(&rest[..at]);
        let item = &rest[at + ATTRIBUTE.len()..];
        rest = &item[item_end(item)..];
    }
    kept.push_str(rest);
    kept
}

/// Where the item that starts `item` (after its `#[cfg(test)]`) ends, for [`without_tests`].
fn item_end(item: &str) -> usize {
    // Past other attributes and the visibility, to the item's keyword.
    let mut head = item.trim_start();
    while head.starts_with("#[") {
        head = head[head.find(']').map_or(head.len(), |e| e + 1)..].trim_start();
    }
    for visibility in ["pub(crate)", "pub(super)", "pub"] {
        if let Some(after) = head.strip_prefix(visibility) {
            head = after.trim_start();
            break;
        }
    }
    let keyword = identifier_at(head);
    let body = matches!(
        keyword,
        "fn" | "impl" | "trait" | "async" | "unsafe" | "macro_rules"
    );
    let body_or_semicolon = matches!(keyword, "mod" | "struct" | "enum" | "union");
    let to_semicolon = matches!(
        keyword,
        "use" | "const" | "static" | "type" | "let" | "extern"
    );
    let chars: Vec<(usize, char)> = item.char_indices().collect();
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        match c {
            '"' => i = literal_end(&chars, i, 0),
            'r' if matches!(chars.get(i + 1), Some((_, '"' | '#'))) => {
                let hashes = chars[i + 1..].iter().take_while(|(_, c)| *c == '#').count();
                if chars.get(i + 1 + hashes).is_some_and(|(_, c)| *c == '"') {
                    i = literal_end(&chars, i + 1 + hashes, hashes);
                }
            }
            '\'' if chars.get(i + 1).is_some_and(|(_, c)| *c == '\\') => {
                i += chars[i + 2..]
                    .iter()
                    .position(|(_, c)| *c == '\'')
                    .map_or(0, |p| p + 2);
            }
            '\'' if chars.get(i + 2).is_some_and(|(_, c)| *c == '\'') => i += 2,
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 && c == '}' && (body || body_or_semicolon) {
                    return at + 1;
                }
            }
            ';' if depth == 0 && !body => return at + 1,
            ',' if depth == 0 && !(body || body_or_semicolon || to_semicolon) => return at + 1,
            _ => {}
        }
        i += 1;
    }
    item.len()
}

/// The index of the closing quote of the string literal whose opening quote is at `open`,
/// closed by a quote and `hashes` `#` (a raw string), or by a quote not escaped.
fn literal_end(chars: &[(usize, char)], open: usize, hashes: usize) -> usize {
    let mut i = open + 1;
    while i < chars.len() {
        match chars[i].1 {
            '\\' if hashes == 0 => i += 1,
            '"' if chars[i + 1..].iter().take(hashes).all(|(_, c)| *c == '#')
                && chars.len() > i + hashes =>
            {
                return i + hashes;
            }
            _ => {}
        }
        i += 1;
    }
    chars.len()
}

#[test]
fn test_code_is_dropped_and_what_follows_it_kept() {
    let source = concat!(
        "use a;\n",
        "#[cfg(test)]\nmod tests {\n    fn f() { g(\"}\", '{', r#\"{\"#); }\n}\n",
        "pub use crate::render::wire;\n",
        "#[cfg(test)]\nmod more;\n",
        "#[cfg(test)]\nuse crate::x;\n",
        "#[cfg(test)]\nconst F: &str = \"{\";\n",
        "#[cfg(test)]\n#[allow(dead_code)]\nfn sized() -> [u8; 4] { [0; 4] }\n",
        "struct S {\n    #[cfg(test)]\n    seen: Vec<u8>,\n    kept: u8,\n}\n",
        "fn h() {\n    #[cfg(test)]\n    COUNT.with(|c| c.set(1));\n    crate::model::x();\n}\n",
        "// #[cfg(test)] in a comment\nuse crate::store::Y;\n",
    );
    let kept = without_tests(source);
    for gone in [
        "tests", "more", "crate::x", "const F", "sized", "seen", "COUNT",
    ] {
        assert!(!kept.contains(gone), "{gone} dropped: {kept}");
    }
    for read in [
        "use a;",
        "crate::render::wire",
        "kept: u8",
        "crate::model::x",
        "crate::store::Y",
    ] {
        assert!(kept.contains(read), "{read} kept: {kept}");
    }
    // On the crate: `webhooks/mod.rs` re-exports the events' renderer after a test-only
    // import (`#[cfg(test)] pub(crate) use dns::fake ..`), and the reach scan sees it.
    let reach = reach_graph(&source_dir());
    assert!(
        reach["webhooks"].contains("webhooks::events"),
        "the re-export after the test item is read: {:?}",
        reach["webhooks"]
    );
}

#[test]
fn relative_imports_between_the_files_of_a_split_folder_count() {
    let src = source_dir();
    let files: BTreeSet<String> = ["domain", "domain::pricing", "domain::checkout", "store"]
        .map(String::from)
        .into();
    let file = src.join("domain/pricing.rs");
    let code = "use super::checkout::Quote;\nuse super::Rule;\nuse self::inner::X;\n";
    assert_eq!(
        relative_imports(&src, &file, code, &files),
        ["domain::checkout"],
        "a sibling reached by super:: is an import; the parent module is not"
    );
    // On the crate: `domain/keys.rs` reaches `domain/fields.rs` only by `super::`.
    assert!(
        graph()["domain::keys"].contains("domain::fields"),
        "{:?}",
        graph()["domain::keys"]
    );
}

fn identifier_at(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The first two segments of a path (`domain::pricing::price` → `domain::pricing`), or the
/// first alone when no second follows (`model::*` → `model`, `Engine` → `Engine`).
fn head_of(text: &str) -> String {
    let first = identifier_at(text);
    let rest = &text[first.len()..];
    match rest.strip_prefix("::").map(identifier_at) {
        Some(second) if !second.is_empty() => format!("{first}::{second}"),
        _ => first.to_owned(),
    }
}

/// The names a file reaches through `crate::`: `crate::x::...`, `crate::X`, `crate::{a, b::c}`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::` in macros, or part of a longer identifier
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                let name = head_of(item.trim());
                if !name.is_empty() {
                    names.insert(name);
                }
            }
        } else {
            names.insert(head_of(rest));
        }
    }
    names
}

/// What `lib.rs` re-exports at the crate root: name → module (`Engine` → `engine`).
fn root_reexports() -> BTreeMap<String, String> {
    let lib = fs::read_to_string(source_dir().join("lib.rs")).expect("lib.rs");
    let mut map = BTreeMap::new();
    for line in lib.lines() {
        let Some(path) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let path = path.trim_end_matches(';');
        let Some((module, items)) = path.rsplit_once("::") else {
            continue;
        };
        for item in items.trim_matches(|c| c == '{' || c == '}').split(',') {
            let name = item.trim().rsplit("::").next().unwrap_or("").trim();
            if !name.is_empty() {
                map.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    map
}

/// The module of [`module_of`] that a file module belongs to (`domain::admission` →
/// `domain::admission`, `store::memory::orders` → `store`, `web::routes::table` →
/// `web::routes`).
fn layer_module(file_module: &str) -> String {
    let mut parts = file_module.split("::");
    let first = parts.next().unwrap_or_default();
    match parts.next() {
        Some(second) if SPLIT_FOLDERS.contains(&first) => format!("{first}::{second}"),
        _ => first.to_owned(),
    }
}

/// The modules a file reaches by `super::` and `self::` paths (resolved to files, as the file
/// scan does; a parent module, which declares its children, not counted).
fn relative_imports(src: &Path, file: &Path, code: &str, files: &BTreeSet<String>) -> Vec<String> {
    let module = file_module(src, file);
    local_paths(code)
        .iter()
        .filter(|path| !path.starts_with("crate::"))
        .filter_map(|path| resolve(&module, path, files))
        .filter(|target| *target != module && !module.starts_with(&format!("{target}::")))
        .filter(|target| !target.is_empty())
        .map(|target| layer_module(&target))
        .collect()
}

fn graph() -> Graph {
    let mut files = Vec::new();
    let src = source_dir();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(f)).collect();
    let file_modules: BTreeSet<String> = files.iter().map(|f| file_module(&src, f)).collect();
    let reexports = root_reexports();
    let mut graph = Graph::new();
    for file in &files {
        let module = module_of(file);
        if module == "lib" || module == "testing" {
            continue;
        }
        let code = without_tests(&fs::read_to_string(file).expect("read a source file"));
        let entry = graph.entry(module.clone()).or_default();
        for target in relative_imports(&src, file, &code, &file_modules) {
            if target != module && target != "testing" && modules.contains(&target) {
                entry.insert(target);
            }
        }
        for path in crate_paths(&code) {
            let first = path.split("::").next().unwrap_or_default().to_owned();
            let target = if modules.contains(&path) {
                path
            } else if modules.contains(&first) {
                first
            } else if let Some(module) = reexports.get(&first) {
                module.clone()
            } else {
                continue;
            };
            if target != module && target != "testing" {
                entry.insert(target);
            }
        }
    }
    graph
}

/// A cycle of the graph, if it has one (as the list of modules along it).
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_top_level_modules_form_no_cycle() {
    let graph = graph();
    assert!(graph.contains_key("domain") && graph.contains_key("engine"));
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "module cycle: {}\n\nthe graph:\n{}",
            cycle.join(" -> "),
            graph
                .iter()
                .map(|(m, deps)| format!(
                    "  {m} -> {}",
                    deps.iter().cloned().collect::<Vec<_>>().join(", ")
                ))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// The layers, top first: each module of `src` (a top-level module, or a file of a
/// [`SPLIT_FOLDERS`] folder) in exactly one. A module imports only its own layer and the
/// layers below it ([`rules`]), but for the imports of [`UPWARD`].
const LAYERS: &[(Layer, &[&str])] = &[
    (Layer::Engine, &["engine", "owner_pages", "sandbox"]),
    (
        Layer::WaysIn,
        &[
            "api",
            "cache",
            "cache::rendered_me",
            "cache::rendered_orders",
            "cache::rendered_products",
            "cache::shared",
            "cache::unknown_keys",
            "http_server",
            "operator",
            "owner",
            "web",
            "web::auth",
            "web::body",
            "web::html",
            "web::input",
            "web::openapi",
            "web::routes",
        ],
    ),
    (
        Layer::Domain,
        &[
            "domain",
            "domain::checkout",
            "domain::fields",
            "domain::kept",
            "domain::keys",
            "domain::moves",
            "domain::placement",
            "domain::wallet",
            "domain::webhooks",
        ],
    ),
    (
        Layer::Services,
        &[
            "cache::pulls_seen",
            "config",
            "error",
            "observe",
            "render",
            "render::messages",
            "render::request_id",
            "render::wire",
            "webhooks",
            "webhooks::dispatcher",
            "webhooks::dns",
            "webhooks::egress",
            "webhooks::events",
            "webhooks::nat64",
            "webhooks::signing",
            "webhooks::urls",
        ],
    ),
    (
        Layer::Store,
        &[
            "domain::admission",
            "domain::order_writes",
            "domain::supply",
            "store",
        ],
    ),
    (
        Layer::Base,
        &[
            "clock",
            "domain::delivery",
            "domain::earnings",
            "domain::edits",
            "domain::filters",
            "domain::pieces",
            "domain::pricing",
            "domain::status_moves",
            "governorates",
            "limits",
            "model",
            "money",
            "time",
        ],
    ),
];

/// The imports that run up [`LAYERS`] (importer, imported, why), at most [`MAX_UPWARD`];
/// ARCHITECTURE.md names each with its reason. `imports_run_up_the_layers_only_where_listed`
/// holds the list to the code both ways: an import up that is not listed fails, and so does
/// an entry whose import is gone.
const UPWARD: &[(&str, &str, &str)] = &[(
    "store",
    "observe",
    "the tracing layer of the store (`store/traced.rs`) reports each store call's span and \
     the order moves' events under the names `observe` defines",
)];

/// The most imports that may run up the layers.
const MAX_UPWARD: usize = 5;

/// A layer of [`LAYERS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    /// The pipeline, and what is built on the engine: the owner's pages, the sandbox.
    Engine,
    /// How callers reach the domain: the HTTP API (parse, route, authenticate), the operator,
    /// the owner, and the state they share (the store with the rendered-JSON caches).
    WaysIn,
    /// The product's rules, no HTTP.
    Domain,
    /// What the layers above share: configuration, errors, rendering, webhooks,
    /// observability.
    Services,
    /// The storage contract, the memory store, and the rules a backend applies inside its
    /// operations (`domain::admission`).
    Store,
    /// Plain data and pure functions.
    Base,
}

/// The rules, one per layer: (the modules they bind, the layers those modules must not
/// import, or `None` for "nothing outside their own layer"). Each layer but the base must not
/// import a layer above it (the engine, at the top, has none above it); the base imports only
/// the base.
fn rules() -> Vec<(&'static [&'static str], Option<&'static [Layer]>)> {
    LAYERS
        .iter()
        .enumerate()
        .map(|(at, (layer, modules))| {
            let forbidden = match layer {
                Layer::Base => None,
                _ => Some(&ORDER[..at]),
            };
            (*modules, forbidden)
        })
        .collect()
}

/// The layers in the order of [`LAYERS`], top first.
const ORDER: [Layer; 6] = [
    Layer::Engine,
    Layer::WaysIn,
    Layer::Domain,
    Layer::Services,
    Layer::Store,
    Layer::Base,
];

fn layer_of(module: &str) -> Option<Layer> {
    LAYERS
        .iter()
        .find(|(_, modules)| modules.contains(&module))
        .map(|(layer, _)| *layer)
}

/// The imports of `graph` that break a rule, as `module -> import (its layer)`.
fn broken_rules(graph: &Graph) -> Vec<String> {
    let mut broken = Vec::new();
    for (bound, forbidden) in rules() {
        for module in bound {
            let own = layer_of(module).expect("a bound module has a layer");
            for import in graph.get(*module).into_iter().flatten() {
                let Some(layer) = layer_of(import) else {
                    continue; // reported by `every_module_has_a_layer`
                };
                let refused = match forbidden {
                    Some(layers) => layers.contains(&layer),
                    None => layer != own,
                } && !UPWARD
                    .iter()
                    .any(|(from, to, _)| from == module && to == import);
                if refused {
                    broken.push(format!("{module} -> {import} ({layer:?})"));
                }
            }
        }
    }
    broken
}

#[test]
fn every_module_has_a_layer() {
    let mut files = Vec::new();
    rust_files(&source_dir(), &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| module_of(f))
        .filter(|m| m != "lib" && m != "testing")
        .collect();
    let unplaced: Vec<&String> = modules.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(unplaced.is_empty(), "modules in no layer: {unplaced:?}");
    let placed: Vec<&str> = LAYERS.iter().flat_map(|(_, m)| m.iter().copied()).collect();
    let gone: Vec<&&str> = placed.iter().filter(|m| !modules.contains(**m)).collect();
    assert!(
        gone.is_empty(),
        "layers name modules that do not exist: {gone:?}"
    );
    let distinct: BTreeSet<&&str> = placed.iter().collect();
    assert_eq!(distinct.len(), placed.len(), "a module is in two layers");
}

#[test]
fn no_module_imports_a_layer_it_must_not() {
    let graph = graph();
    assert!(graph.contains_key("store") && graph.contains_key("model"));
    let broken = broken_rules(&graph);
    assert!(
        broken.is_empty(),
        "imports against the layering:\n  {}",
        broken.join("\n  ")
    );
}

/// Every import of `graph` from a module to a module of a layer above its own, as
/// `(importer, imported)`; for the base, an import of any other layer.
fn upward_imports(graph: &Graph) -> BTreeSet<(String, String)> {
    let rank = |layer: Layer| ORDER.iter().position(|l| *l == layer).expect("a layer");
    let mut up = BTreeSet::new();
    for (module, imports) in graph {
        let Some(own) = layer_of(module) else {
            continue;
        };
        for import in imports {
            if layer_of(import).is_some_and(|layer| rank(layer) < rank(own)) {
                up.insert((module.clone(), import.clone()));
            }
        }
    }
    up
}

#[test]
fn imports_run_up_the_layers_only_where_listed() {
    let graph = graph();
    let found = upward_imports(&graph);
    let listed: BTreeSet<(String, String)> = UPWARD
        .iter()
        .map(|(from, to, _)| ((*from).to_owned(), (*to).to_owned()))
        .collect();
    assert!(UPWARD.len() <= MAX_UPWARD, "{} imports up", UPWARD.len());
    assert_eq!(
        found, listed,
        "the imports that run up the layers (left) and UPWARD (right)"
    );
    // A planted import up, not listed, is found.
    let mut planted = graph.clone();
    planted
        .entry("config".into())
        .or_default()
        .insert("web::routes".into());
    assert!(upward_imports(&planted).contains(&("config".into(), "web::routes".into())));
    assert!(
        broken_rules(&planted).contains(&"config -> web::routes (WaysIn)".to_string()),
        "{:?}",
        broken_rules(&planted)
    );
}

#[test]
fn every_layer_has_a_rule_that_fails_on_a_planted_violation() {
    let graph = graph();
    assert!(broken_rules(&graph).is_empty());
    let rules = rules();
    assert_eq!(rules.len(), LAYERS.len(), "one rule a layer");
    for (at, (layer, modules)) in LAYERS.iter().enumerate() {
        assert_eq!(ORDER[at], *layer, "ORDER follows LAYERS");
        assert_eq!(
            rules[at].0, *modules,
            "the rule of {layer:?} binds its modules"
        );
        // The engine has no layer above it: its rule is that nothing imports the sandbox
        // (`nothing_imports_the_sandbox`).
        if *layer == Layer::Engine {
            continue;
        }
        // A module of the layer imports a module of the layer just above it (for the base,
        // the store's layer): the rule refuses it.
        let above = LAYERS[at - 1].1[0];
        for module in *modules {
            let mut planted = graph.clone();
            planted
                .entry((*module).to_owned())
                .or_default()
                .insert(above.to_owned());
            let expected = format!("{module} -> {above} ({:?})", LAYERS[at - 1].0);
            assert!(
                broken_rules(&planted).contains(&expected),
                "a planted {expected} is refused"
            );
        }
    }
    // The base imports no other layer, not even the one just above it.
    let mut planted = graph.clone();
    planted
        .entry("money".into())
        .or_default()
        .insert("store".into());
    assert!(broken_rules(&planted).contains(&"money -> store (Store)".to_string()));
}

/// Nothing imports the sandbox (the demo fixture, with its fixed demo keys): it is built on
/// the engine, and no module of the product depends on it.
fn sandbox_importers(graph: &Graph) -> Vec<&String> {
    graph
        .iter()
        .filter(|(_, imports)| imports.contains("sandbox"))
        .map(|(module, _)| module)
        .collect()
}

#[test]
fn nothing_imports_the_sandbox() {
    let graph = graph();
    assert!(graph.contains_key("sandbox"), "the scan sees the sandbox");
    assert!(
        sandbox_importers(&graph).is_empty(),
        "{:?}",
        sandbox_importers(&graph)
    );
    let mut planted = graph.clone();
    planted
        .entry("engine".into())
        .or_default()
        .insert("sandbox".into());
    assert_eq!(sandbox_importers(&planted), ["engine"]);
}

/// The longest a source file may be, outside `tests/`.
const MAX_LINES: usize = 700;

/// Files over [`MAX_LINES`] that another change is splitting; each must be over it (so the
/// entry is dropped once it is split).
const BEING_SPLIT: &[&str] = &[];

#[test]
fn no_source_file_is_over_700_lines() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).expect("read a directory") {
            let path = entry.expect("dir entry").path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if path.is_dir() {
                if !(name.starts_with('.') || name == "target" || name == "tests") {
                    walk(&path, out);
                }
            } else if name.ends_with(".rs") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    walk(&root, &mut files);
    assert!(files.len() > 100, "the walk found the workspace's sources");
    let mut over = Vec::new();
    for file in &files {
        let lines = fs::read_to_string(file)
            .expect("read a source file")
            .lines()
            .count();
        let name = file
            .strip_prefix(&root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        let excused = BEING_SPLIT.contains(&name.as_str());
        if excused != (lines > MAX_LINES) {
            over.push(format!("{name}: {lines} lines (excused: {excused})"));
        }
    }
    assert!(
        over.is_empty(),
        "over {MAX_LINES} lines, or excused and no longer over:\n  {}",
        over.join("\n  ")
    );
}

/// The files `x.rs` under `src` that sit beside a folder `x/`: a module with children is
/// `x/mod.rs`, one style for every module.
fn files_beside_their_folder(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .iter()
        .filter(|file| file.with_extension("").is_dir())
        .map(|file| {
            file.strip_prefix(src)
                .expect("under src")
                .display()
                .to_string()
        })
        .collect()
}

#[test]
fn one_module_file_style() {
    for krate in [
        "commerce-core",
        "commerce-store-sqlx",
        "commerce-axum",
        "commerce-warp",
    ] {
        let src = source_dir().join("../..").join(krate).join("src");
        let beside = files_beside_their_folder(&src);
        assert!(
            beside.is_empty(),
            "{krate}: files beside their folder: {beside:?}"
        );
    }
    // A planted `x.rs` beside `x/` is found.
    let dir = std::env::temp_dir().join(format!("layering-style-{}", std::process::id()));
    fs::create_dir_all(dir.join("engine")).expect("a folder");
    fs::write(dir.join("engine.rs"), "mod background;").expect("a file");
    fs::write(dir.join("engine/background.rs"), "").expect("a file");
    let beside = files_beside_their_folder(&dir);
    fs::remove_dir_all(&dir).expect("clean up");
    assert_eq!(beside, ["engine.rs"]);
}

#[test]
fn the_scan_sees_every_form_of_path_and_skips_comments() {
    let code = code_of(
        "use crate::store::Store;\nuse crate::{money, time::cairo_month};\n\
         /// see [`crate::api`]\nlet x = crate::Engine::new(s); // crate::render::wire\n\
         let url = \"https://x\"; $crate::testing::run();",
    );
    let names = crate_paths(&code);
    let expected: BTreeSet<String> = ["store::Store", "money", "time::cairo_month", "Engine::new"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(names, expected);
    let mut graph = Graph::new();
    graph.insert("a".into(), ["b".to_string()].into());
    graph.insert("b".into(), ["c".to_string()].into());
    graph.insert("c".into(), ["a".to_string()].into());
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

#[test]
fn the_rules_catch_upward_imports() {
    let mut graph = Graph::new();
    graph.insert(
        "store".into(),
        ["render::wire".to_string(), "model".into()].into(),
    );
    graph.insert(
        "domain::checkout".into(),
        ["store".to_string(), "money".into(), "api".into()].into(),
    );
    graph.insert("model".into(), ["store".to_string()].into());
    graph.insert(
        "domain::pricing".into(),
        ["money".to_string(), "domain::checkout".into()].into(),
    );
    assert_eq!(
        broken_rules(&graph),
        [
            "domain::checkout -> api (WaysIn)",
            "store -> render::wire (Services)",
            "domain::pricing -> domain::checkout (Domain)",
            "model -> store (Store)",
        ]
    );
}

/// A file's module path inside its crate (`domain/checkout.rs` → `domain::checkout`,
/// `store/mod.rs` → `store`, `lib.rs` → ``).
fn file_module(src: &Path, file: &Path) -> String {
    let relative = file
        .strip_prefix(src)
        .expect("under src")
        .with_extension("");
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .filter(|part| part != "mod" && part != "lib")
        .collect();
    parts.join("::")
}

/// The paths a file's code names through `crate::`, `super::` or `self::`, each as written
/// (`super::fields::Problem`); a group (`crate::{a::B, c}`) gives one path per item.
fn local_paths(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(start) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
                continue; // `$crate::` in macros, `a::super`, part of a longer identifier
            }
            let rest = &code[at..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let path = rest[..end].trim_end_matches(':');
            if rest[end..].starts_with('{') {
                let inner = &rest[end + 1..];
                let inner = &inner[..inner.find('}').unwrap_or(inner.len())];
                for item in inner.split(',') {
                    let item = identifier_path(item.trim());
                    if !item.is_empty() {
                        paths.push(format!("{path}::{item}"));
                    }
                }
            }
            paths.push(path.to_owned());
        }
    }
    paths
}

fn identifier_path(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    text[..end].trim_end_matches(':')
}

/// The file module `path`, written in `module`, reaches: the longest prefix of the path that
/// is a file of the crate.
fn resolve(module: &str, path: &str, files: &BTreeSet<String>) -> Option<String> {
    let mut segments: Vec<&str> = path.split("::").collect();
    let mut base: Vec<&str> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").collect()
    };
    match segments.first() {
        Some(&"crate") => {
            base.clear();
            segments.remove(0);
        }
        Some(&"self") => {
            segments.remove(0);
        }
        _ => {
            while segments.first() == Some(&"super") {
                base.pop();
                segments.remove(0);
            }
        }
    }
    (0..=segments.len()).rev().find_map(|take| {
        let candidate: Vec<&str> = base.iter().chain(&segments[..take]).copied().collect();
        let candidate = candidate.join("::");
        files.contains(&candidate).then_some(candidate)
    })
}

/// File module → the file modules its non-test code reaches (a parent module, which declares
/// and re-exports its children, is not counted as reached by them), for the crate whose
/// sources are under `src`; `testing/` (test support) is left out.
fn file_graph(src: &Path) -> Graph {
    let mut sources = Vec::new();
    rust_files(src, &mut sources);
    let files: BTreeSet<String> = sources.iter().map(|f| file_module(src, f)).collect();
    let mut graph = Graph::new();
    for file in &sources {
        let module = file_module(src, file);
        if module == "testing" || module.starts_with("testing::") {
            continue;
        }
        let source = fs::read_to_string(file).expect("read a source file");
        let source = &without_tests(&source);
        let entry = graph.entry(module.clone()).or_default();
        for path in local_paths(&code_of(source)) {
            let Some(target) = resolve(&module, &path, &files) else {
                continue;
            };
            let is_ancestor = target.is_empty() || module.starts_with(&format!("{target}::"));
            if target != module && !is_ancestor && !target.starts_with("testing") {
                entry.insert(target);
            }
        }
    }
    graph
}

#[test]
fn no_circle_of_imports_among_source_files() {
    let sqlx = source_dir().join("../../commerce-store-sqlx/src");
    for src in [source_dir(), sqlx] {
        let graph = file_graph(&src);
        assert!(
            graph.len() > 20,
            "{} files under {}",
            graph.len(),
            src.display()
        );
        if let Some(cycle) = find_cycle(&graph) {
            panic!(
                "a circle of imports under {}: {}",
                src.display(),
                cycle.join(" -> ")
            );
        }
    }
}

#[test]
fn the_file_scan_resolves_relative_paths_and_finds_a_planted_circle() {
    let files: BTreeSet<String> = ["domain", "domain::checkout", "domain::fields", "model"]
        .into_iter()
        .map(String::from)
        .collect();
    let code = code_of(
        "use super::fields::{Problem, FieldProblem};\nuse crate::model::Order;\n\
         let x = self::inner(); $crate::domain::fields::run(); // crate::domain",
    );
    let reached: BTreeSet<String> = local_paths(&code)
        .iter()
        .filter_map(|path| resolve("domain::checkout", path, &files))
        .collect();
    let expected: BTreeSet<String> = ["domain::fields", "model", "domain::checkout"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(reached, expected);
    // The crate as it is, with one planted import back: a circle.
    let mut graph = file_graph(&source_dir());
    graph
        .entry("model".into())
        .or_default()
        .insert("domain::checkout".into());
    assert!(
        find_cycle(&graph).is_some(),
        "a planted import back is a circle"
    );
}

/// What no storage file may reach, directly or through another module: the JSON views
/// (`render::wire`), the event renderer (`webhooks::events`) and the Arabic texts
/// (`render::messages`). A store keeps records; rendering belongs above it.
const RENDERING: &[&str] = &["render::wire", "webhooks::events", "render::messages"];

/// Whether the file module `module` is one of `roots` or inside one.
fn is_within(module: &str, roots: &[&str]) -> bool {
    roots
        .iter()
        .any(|root| module == *root || module.starts_with(&format!("{root}::")))
}

/// The children a module's file names in a relative `use` (`pub use orders::OrderStore;`,
/// `use self::x` is in [`local_paths`]): the edges from a parent module to the children it
/// re-exports, which [`file_graph`] leaves out (it reads `crate::`, `super::` and `self::`).
fn child_uses(module: &str, code: &str, files: &BTreeSet<String>) -> BTreeSet<String> {
    let mut children = BTreeSet::new();
    for line in code.lines() {
        let mut line = line.trim();
        for visibility in ["pub(crate) ", "pub(super) ", "pub "] {
            line = line.strip_prefix(visibility).unwrap_or(line);
        }
        let Some(path) = line.strip_prefix("use ") else {
            continue;
        };
        let name = identifier_at(path);
        let child = if module.is_empty() {
            name.to_owned()
        } else {
            format!("{module}::{name}")
        };
        if !name.is_empty() && files.contains(&child) {
            children.insert(child);
        }
    }
    children
}

/// [`file_graph`] with the edges from each parent module to the children it re-exports: what
/// a file reaches when it names an item through its parent (`crate::model::Order` reaches
/// `model::order`).
fn reach_graph(src: &Path) -> Graph {
    let mut graph = file_graph(src);
    let mut sources = Vec::new();
    rust_files(src, &mut sources);
    let files: BTreeSet<String> = sources.iter().map(|f| file_module(src, f)).collect();
    for file in &sources {
        let module = file_module(src, file);
        if module.is_empty() || module == "testing" || module.starts_with("testing::") {
            continue;
        }
        let source = fs::read_to_string(file).expect("read a source file");
        let source = &without_tests(&source);
        let children = child_uses(&module, &code_of(source), &files);
        graph.entry(module).or_default().extend(children);
    }
    graph
}

/// The first chain of imports by which `from` reaches a module within `forbidden`, if any
/// (breadth first: the shortest).
fn forbidden_reach(graph: &Graph, from: &str, forbidden: &[&str]) -> Option<Vec<String>> {
    let mut came_from: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([from.to_owned()]);
    let mut seen = BTreeSet::from([from.to_owned()]);
    while let Some(node) = queue.pop_front() {
        if is_within(&node, forbidden) {
            let mut chain = vec![node.clone()];
            let mut at = node;
            while let Some(previous) = came_from.get(&at) {
                chain.push(previous.clone());
                at = previous.clone();
            }
            chain.reverse();
            return Some(chain);
        }
        for next in graph.get(&node).into_iter().flatten() {
            if seen.insert(next.clone()) {
                came_from.insert(next.clone(), node.clone());
                queue.push_back(next.clone());
            }
        }
    }
    None
}

/// Every chain by which a file within `roots` reaches a module within `forbidden`.
fn storage_reaches(graph: &Graph, roots: &[&str], forbidden: &[&str]) -> Vec<String> {
    graph
        .keys()
        .filter(|module| is_within(module, roots))
        .filter_map(|module| forbidden_reach(graph, module, forbidden))
        .map(|chain| chain.join(" -> "))
        .collect()
}

#[test]
fn no_storage_file_reaches_rendering_even_through_another_module() {
    let graph = reach_graph(&source_dir());
    let stores = graph.keys().filter(|m| is_within(m, &["store"])).count();
    assert!(stores > 20, "{stores} files under store/");
    assert!(
        graph["store::memory::webhooks"].contains("store::memory")
            || graph["store::memory::webhooks"]
                .iter()
                .any(|m| m.starts_with("model")),
        "the scan sees a store file's imports: {:?}",
        graph["store::memory::webhooks"]
    );
    let reaches = storage_reaches(&graph, &["store"], RENDERING);
    assert!(
        reaches.is_empty(),
        "store files that reach rendering:\n  {}",
        reaches.join("\n  ")
    );
}

/// The `commerce_core::...` paths of the SQL store's sources (tests left out), each resolved
/// to the file of `commerce-core` it names (through the crate root's re-exports for an item
/// named at the root); paths that name no file (macros) are left out.
fn sqlx_core_imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = source_dir().join("../../commerce-store-sqlx/src");
    let mut core_files = Vec::new();
    rust_files(&source_dir(), &mut core_files);
    let files: BTreeSet<String> = core_files
        .iter()
        .map(|f| file_module(&source_dir(), f))
        .collect();
    let reexports = root_reexports();
    let mut sources = Vec::new();
    rust_files(&src, &mut sources);
    let mut imports = BTreeMap::new();
    for file in &sources {
        let source = fs::read_to_string(file).expect("read a source file");
        let source = &without_tests(&source);
        let code = code_of(source).replace("commerce_core::", "crate::");
        let reached: &mut BTreeSet<String> = imports.entry(file_module(&src, file)).or_default();
        for path in local_paths(&code)
            .into_iter()
            .filter(|p| p.starts_with("crate::"))
        {
            match resolve("", &path, &files) {
                Some(target) if !target.is_empty() => {
                    reached.insert(target);
                }
                _ => {
                    let name = path.trim_start_matches("crate::");
                    if let Some(module) = reexports.get(identifier_at(name)) {
                        reached.insert(module.clone());
                    }
                }
            }
        }
    }
    imports
}

#[test]
fn the_sql_store_uses_nothing_of_commerce_core_that_renders() {
    let graph = reach_graph(&source_dir());
    let imports = sqlx_core_imports();
    let outbox = &imports["outbox"];
    assert!(
        outbox.contains("model"),
        "the scan sees the SQL store's imports of commerce_core: {outbox:?}"
    );
    let mut broken = Vec::new();
    for (file, reached) in &imports {
        for target in reached {
            if let Some(chain) = forbidden_reach(&graph, target, RENDERING) {
                broken.push(format!("{file} -> commerce_core::{}", chain.join(" -> ")));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "the SQL store reaches rendering:\n  {}",
        broken.join("\n  ")
    );
}

#[test]
fn a_planted_indirect_import_of_rendering_is_caught() {
    // A synthetic graph: a store file reaches `wire` through two other modules.
    let mut graph = Graph::new();
    graph.insert("store::memory::orders".into(), ["model".to_string()].into());
    graph.insert("model".into(), ["model::order".to_string()].into());
    graph.insert(
        "model::order".into(),
        ["render::wire::orders".to_string()].into(),
    );
    graph.insert("store::clean".into(), ["model::ids".to_string()].into());
    assert_eq!(
        storage_reaches(&graph, &["store"], RENDERING),
        ["store::memory::orders -> model -> model::order -> render::wire::orders"]
    );
    // The parent's re-exports are edges: `crate::model::X` reaches the child that has it.
    let files: BTreeSet<String> = ["model", "model::order", "model::ids"]
        .into_iter()
        .map(String::from)
        .collect();
    let code = code_of("mod order;\npub use order::*;\npub(crate) use ids::Id; // use x::y");
    assert_eq!(
        child_uses("model", &code, &files),
        BTreeSet::from(["model::order".to_string(), "model::ids".to_string()])
    );
    // The crate as it is, with one planted import from a base module the stores use to
    // the event renderer: the stores now reach it through that module.
    let mut graph = reach_graph(&source_dir());
    assert!(storage_reaches(&graph, &["store"], RENDERING).is_empty());
    graph
        .entry("domain::earnings".into())
        .or_default()
        .insert("webhooks::events".into());
    let reaches = storage_reaches(&graph, &["store"], RENDERING);
    assert!(
        reaches
            .iter()
            .any(|chain| chain.contains("domain::earnings -> webhooks::events")),
        "a planted indirect import is caught: {reaches:?}"
    );
}
