//! One public path per item: every item a user of a crate reaches (from its root, through
//! public modules and re-exports, the other workspace crates' re-exported items included) is
//! reached by one path only, so that docs, examples and callers all name it alike.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// Modules whose items repeat others on purpose: a prelude, for `use ...::prelude::*`. Their
/// items are not counted as a second path. A path from a crate's root, without its name.
pub const PRELUDES: &[&str] = &["store::prelude"];

/// One public path to an item.
#[derive(Debug, Clone)]
pub struct Reach {
    /// The path from the crate's root, without the crate's name (`config::Config`).
    pub path: String,
    /// Which item: `<crate>#<id>` for an item of a workspace crate, the re-export's source
    /// (`rust_decimal::Decimal`) for an item of another crate.
    pub target: String,
    /// Whether the item is a module (or a whole crate).
    pub module: bool,
    /// Whether the item belongs to a crate outside the workspace.
    pub external: bool,
}

/// Every public path of `krate`'s items, read from its rustdoc JSON `doc`. A re-export of a
/// workspace crate's item or module is resolved through `workspace` (each such crate's own
/// paths, by its name with `_`); any other crate's item is known by the re-export's source.
pub fn reaches(krate: &str, doc: &Value, workspace: &BTreeMap<String, Vec<Reach>>) -> Vec<Reach> {
    let index = &doc["index"];
    let key = |id: &Value| match id {
        Value::Number(n) => n.to_string(),
        other => other.as_str().unwrap_or_default().to_owned(),
    };
    let local = |id: &Value| index.get(key(id)).filter(|item| item["crate_id"] == 0);
    let mut found = Vec::new();
    let mut entered = BTreeSet::new();
    // (item, the path of the module it is reached from, the name it is reached by when a
    // re-export names it: then it is public whatever its own module's visibility).
    let mut queue: Vec<(Value, String, Option<String>)> =
        vec![(doc["root"].clone(), String::new(), None)];
    while let Some((id, parent, named)) = queue.pop() {
        let Some(item) = local(&id) else {
            continue;
        };
        let is_root = id == doc["root"];
        if named.is_none() && !is_root && item["visibility"] != "public" {
            continue;
        }
        let name = named
            .clone()
            .or_else(|| item["name"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let here = join(&parent, &name);
        let inner = &item["inner"];
        if let Some(module) = inner.get("module") {
            if !is_root {
                found.push(Reach {
                    path: here.clone(),
                    target: format!("{krate}#{}", key(&id)),
                    module: true,
                    external: false,
                });
            }
            if entered.insert(key(&id)) {
                let path = if is_root { String::new() } else { here };
                for child in module["items"].as_array().into_iter().flatten() {
                    queue.push((child.clone(), path.clone(), None));
                }
            }
        } else if let Some(reexport) = inner.get("use") {
            // A re-export has no name of its own: it names its target.
            let source = reexport["source"].as_str().unwrap_or_default();
            let name = reexport["name"].as_str().unwrap_or_default().to_owned();
            let here = join(&parent, &name);
            let target = &reexport["id"];
            if reexport["is_glob"] == true {
                // The glob's target's items, reached from the glob's module.
                if let Some(module) = local(target) {
                    for child in module["inner"]["module"]["items"]
                        .as_array()
                        .into_iter()
                        .flatten()
                    {
                        queue.push((child.clone(), parent.clone(), None));
                    }
                }
            } else if local(target).is_some() {
                queue.push((target.clone(), parent.clone(), Some(name)));
            } else if !target.is_null() {
                found.extend(foreign(doc, &key(target), source, &here, workspace));
            }
        } else if !name.is_empty() {
            found.push(Reach {
                path: here,
                target: format!("{krate}#{}", key(&id)),
                module: false,
                external: false,
            });
        }
    }
    found
}

/// The paths an item of another crate adds when re-exported at `here`: a workspace crate's
/// item (or module, with every path under it) as that crate reaches it, another crate's by
/// its source.
fn foreign(
    doc: &Value,
    id: &str,
    source: &str,
    here: &str,
    workspace: &BTreeMap<String, Vec<Reach>>,
) -> Vec<Reach> {
    let (first, rest) = source.split_once("::").unwrap_or((source, ""));
    if let Some(theirs) = workspace.get(first) {
        return theirs
            .iter()
            .filter_map(|reach| {
                let suffix = if rest.is_empty() {
                    Some(reach.path.as_str())
                } else if reach.path == rest {
                    Some("")
                } else {
                    reach.path.strip_prefix(&format!("{rest}::"))
                }?;
                Some(Reach {
                    path: join(here, suffix),
                    ..reach.clone()
                })
            })
            .collect();
    }
    vec![Reach {
        path: here.to_owned(),
        target: source.to_owned(),
        module: doc["paths"][id]["kind"] == "module",
        external: true,
    }]
}

/// `parent::name`, or either alone when the other is empty.
fn join(parent: &str, name: &str) -> String {
    match (parent.is_empty(), name.is_empty()) {
        (true, _) => name.to_owned(),
        (_, true) => parent.to_owned(),
        _ => format!("{parent}::{name}"),
    }
}

/// The items of `krate` reached by more than one public path (a prelude's paths left out),
/// one line each: `two public paths: <crate>::a, <crate>::b::a`. An item of a crate outside
/// the workspace counts too when it is re-exported beside its whole crate (`Decimal` and
/// `rust_decimal`, which holds it).
pub fn repeated(krate: &str, reaches: &[Reach]) -> Vec<String> {
    let krate = krate.replace('-', "_");
    let in_prelude = |path: &str| {
        PRELUDES.iter().any(|prelude| {
            path.strip_prefix(prelude)
                .is_some_and(|rest| rest.starts_with("::"))
        })
    };
    let mut by_target: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for reach in reaches.iter().filter(|reach| !in_prelude(&reach.path)) {
        by_target
            .entry(&reach.target)
            .or_default()
            .insert(format!("{krate}::{}", reach.path));
    }
    // Another crate's item beside a re-export of a module of that crate that holds it.
    for whole in reaches
        .iter()
        .filter(|reach| reach.external && reach.module)
    {
        for part in reaches.iter().filter(|reach| reach.external) {
            if let Some(rest) = part.target.strip_prefix(&format!("{}::", whole.target)) {
                by_target
                    .entry(&part.target)
                    .or_default()
                    .insert(format!("{krate}::{}::{rest}", whole.path));
            }
        }
    }
    by_target
        .into_values()
        .filter(|paths| paths.len() > 1)
        .map(|paths| {
            let paths: Vec<String> = paths.into_iter().collect();
            format!("two public paths: {}", paths.join(", "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A crate `fix`: a struct `A` in the public module `m`, and a `Token` in the private
    /// module `hidden`, re-exported at the root. With `reexport_a`, the root also re-exports
    /// `m::A` (the planted second path).
    fn fixture(reexport_a: bool) -> Value {
        let mut root_items = vec![json!(2), json!(5)];
        if reexport_a {
            root_items.push(json!(3));
        }
        json!({
            "root": 0,
            "index": {
                "0": {"crate_id": 0, "name": "fix", "visibility": "public",
                      "inner": {"module": {"items": root_items}}},
                "1": {"crate_id": 0, "name": "A", "visibility": "public",
                      "inner": {"struct": {}}},
                "2": {"crate_id": 0, "name": "m", "visibility": "public",
                      "inner": {"module": {"items": [1]}}},
                "3": {"crate_id": 0, "name": null, "visibility": "public",
                      "inner": {"use": {"source": "m::A", "name": "A", "id": 1, "is_glob": false}}},
                "4": {"crate_id": 0, "name": "hidden", "visibility": "default",
                      "inner": {"module": {"items": [6]}}},
                "5": {"crate_id": 0, "name": null, "visibility": "public",
                      "inner": {"use": {"source": "hidden::Token", "name": "Token", "id": 6, "is_glob": false}}},
                "6": {"crate_id": 0, "name": "Token", "visibility": "public",
                      "inner": {"struct": {}}}
            },
            "paths": {}
        })
    }

    /// A crate `top` that re-exports `items` (source, id, kind): ids from 10 are foreign.
    fn facade(items: &[(&str, u32, &str)]) -> Value {
        let mut index = serde_json::Map::new();
        let mut paths = serde_json::Map::new();
        let mut root_items = Vec::new();
        for (n, (source, id, kind)) in items.iter().enumerate() {
            let name = source.rsplit("::").next().unwrap();
            index.insert(
                (n + 1).to_string(),
                json!({"crate_id": 0, "name": null, "visibility": "public",
                       "inner": {"use": {"source": source, "name": name, "id": id, "is_glob": false}}}),
            );
            paths.insert(id.to_string(), json!({"crate_id": 1, "kind": kind}));
            root_items.push(json!(n + 1));
        }
        index.insert(
            "0".into(),
            json!({"crate_id": 0, "name": "top", "visibility": "public",
                   "inner": {"module": {"items": root_items}}}),
        );
        json!({"root": 0, "index": index, "paths": paths})
    }

    fn workspace() -> BTreeMap<String, Vec<Reach>> {
        let fix = reaches("fix", &fixture(false), &BTreeMap::new());
        BTreeMap::from([("fix".to_owned(), fix)])
    }

    #[test]
    fn one_path_each_passes() {
        let found = reaches("fix", &fixture(false), &BTreeMap::new());
        let mut paths: Vec<&str> = found.iter().map(|r| r.path.as_str()).collect();
        paths.sort_unstable();
        assert_eq!(paths, ["Token", "m", "m::A"]);
        assert!(repeated("fix", &found).is_empty());
    }

    #[test]
    fn a_planted_second_path_in_the_crate_fails() {
        let found = reaches("fix", &fixture(true), &BTreeMap::new());
        assert_eq!(
            repeated("fix", &found),
            ["two public paths: fix::A, fix::m::A"]
        );
    }

    #[test]
    fn a_facade_reexporting_an_item_beside_its_module_fails() {
        let top = facade(&[("fix::m", 10, "module"), ("fix::m::A", 11, "struct")]);
        let found = reaches("top", &top, &workspace());
        assert_eq!(
            repeated("top", &found),
            ["two public paths: top::A, top::m::A"]
        );
        let top = facade(&[("fix::m", 10, "module"), ("fix::Token", 11, "struct")]);
        assert!(repeated("top", &reaches("top", &top, &workspace())).is_empty());
    }

    #[test]
    fn another_crates_item_beside_that_crate_fails() {
        let top = facade(&[("ext", 10, "module"), ("ext::Decimal", 11, "struct")]);
        let found = reaches("top", &top, &BTreeMap::new());
        assert_eq!(
            repeated("top", &found),
            ["two public paths: top::Decimal, top::ext::Decimal"]
        );
    }

    #[test]
    fn a_preludes_items_are_not_a_second_path() {
        let reach = |path: &str| Reach {
            path: path.to_owned(),
            target: "core#1".to_owned(),
            module: false,
            external: false,
        };
        let found = [reach("store::Store"), reach("store::prelude::Store")];
        assert!(repeated("core", &found).is_empty());
        let found = [reach("store::Store"), reach("Store")];
        assert_eq!(
            repeated("core", &found),
            ["two public paths: core::Store, core::store::Store"]
        );
    }
}
