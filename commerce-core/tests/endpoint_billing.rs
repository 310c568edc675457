//! The billing of the endpoint table against docs/billing.md: the endpoints declared to bill
//! pulled products and order operations are exactly those the two tables of the document list.

use std::collections::BTreeSet;

use commerce_core::testing::dispatch::{API_PREFIX, Billing, ROUTES};

/// The `METHOD /path` cells of the table under the heading `## {section}` of docs/billing.md.
fn documented(section: &str) -> BTreeSet<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/billing.md");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let heading = format!("## {section}\n");
    let start = text
        .find(&heading)
        .unwrap_or_else(|| panic!("no {heading}"));
    text[start + heading.len()..]
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .skip(2) // the header and the separator
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            line.split('`')
                .nth(1)
                .expect("a `METHOD /path` cell")
                .to_owned()
        })
        .collect()
}

/// The routes of the endpoint table declared to bill `billing`, as `METHOD /api/v1/path`.
fn declared(billing: Billing) -> BTreeSet<String> {
    ROUTES
        .iter()
        .filter(|route| route.endpoint(&[1, 1]).billing() == billing)
        .map(|route| format!("{} {API_PREFIX}{}", route.method, route.path))
        .collect()
}

#[test]
fn the_billed_endpoints_of_the_table_are_the_documented_ones() {
    let pulls = documented("Pulled products");
    assert_eq!(pulls.len(), 3, "{pulls:?}");
    assert_eq!(declared(Billing::Pulls), pulls);
    let operations = documented("Order operations");
    assert_eq!(operations.len(), 2, "{operations:?}");
    assert_eq!(declared(Billing::OrderOperation), operations);
}
