//! The rules of an order's own fields, whoever enters the order: `POST /orders` reads them
//! from JSON, the [`Operator`](crate::operator::Operator) from an [`OrderDraft`]; both apply these
//! functions and limits, and both report a [`FieldProblem`] per field that breaks one.

use rust_decimal::Decimal;

use super::checkout::{CheckoutRequest, LineRequest, MAX_LINES, MAX_QUANTITY, MAX_WARRANTIES};
use super::placement::OrderRequest;
use crate::model::{FieldProblem, Problem};
use crate::model::{GovernorateId, ShippingOptionId, VariantId, WarrantyId};
use crate::money::accepted_amount;

pub use crate::limits::{MAX_NOTE, MAX_PHONE, MAX_REFERENCE, MAX_TEXT};

/// Which text a string field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextKind {
    /// One line: every control character is refused, tab and line breaks included.
    SingleLine,
    /// Several lines (`note`, `address`, `reason_note`): tab, CR and LF are allowed.
    MultiLine,
}

/// Checks that `text` is printable text: no control character (Unicode `Cc`: U+0000-U+001F,
/// U+007F-U+009F) except tab, CR and LF in a multi-line field, and no bidirectional embedding,
/// override or isolate (U+202A-U+202E, U+2066-U+2069).
pub(crate) fn check_printable(text: &str, kind: TextKind) -> Result<(), Problem> {
    let refused = |c: char| match c {
        '\t' | '\n' | '\r' => kind == TextKind::SingleLine,
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => true,
        c => c.is_control(),
    };
    if text.chars().any(refused) {
        return Err(Problem::NotPrintable {
            multi_line: kind == TextKind::MultiLine,
        });
    }
    Ok(())
}

/// A text field as stored: printable, trimmed, at most `max` characters; `None` when blank.
pub(crate) fn clean_text(raw: &str, max: usize, kind: TextKind) -> Result<Option<String>, Problem> {
    check_printable(raw, kind)?;
    let text = raw.trim();
    if text.chars().count() > max {
        return Err(Problem::TooLong { max });
    }
    Ok((!text.is_empty()).then(|| text.to_owned()))
}

/// Normalises an Egyptian mobile: `+20` and `0020` prefixes become `0`; spaces and dashes are
/// dropped; the result must be `01` followed by 9 digits.
pub fn normalize_phone(raw: &str) -> Option<String> {
    let compact: String = raw
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .collect();
    let local = if let Some(rest) = compact.strip_prefix("+20") {
        format!("0{rest}")
    } else if let Some(rest) = compact.strip_prefix("0020") {
        format!("0{rest}")
    } else {
        compact
    };
    let valid =
        local.len() == 11 && local.starts_with("01") && local.bytes().all(|b| b.is_ascii_digit());
    valid.then_some(local)
}

/// A phone field as typed: printable single-line text that normalises to an Egyptian mobile
/// (anything longer than [`MAX_PHONE`] is simply not one); `None` when blank.
pub(crate) fn phone(raw: &str) -> Result<Option<String>, Problem> {
    let text = match clean_text(raw, MAX_PHONE, TextKind::SingleLine) {
        Err(Problem::TooLong { .. }) => return Err(Problem::InvalidPhone),
        other => other?,
    };
    text.map(|t| normalize_phone(&t).ok_or(Problem::InvalidPhone))
        .transpose()
}

/// Whether `text` is an http or https URL with a host written after `//` (the URL parser
/// alone would read `http:///nohost` as the host `nohost`).
pub(crate) fn is_web_link(text: &str) -> bool {
    let host_written = text
        .split_once("://")
        .is_some_and(|(_, rest)| !rest.is_empty() && !rest.starts_with(['/', '\\']));
    host_written
        && url::Url::parse(text)
            .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
}

/// Collects the problems of one object's fields under their dotted keys.
struct Checker {
    prefix: String,
    problems: Vec<FieldProblem>,
}

impl Checker {
    fn fail(&mut self, name: &str, problem: Problem) {
        self.problems.push(FieldProblem {
            field: format!("{}{name}", self.prefix),
            problem,
        });
    }

    fn optional(
        &mut self,
        name: &str,
        raw: Option<&str>,
        max: usize,
        kind: TextKind,
    ) -> Option<String> {
        match clean_text(raw?, max, kind) {
            Ok(text) => text,
            Err(problem) => {
                self.fail(name, problem);
                None
            }
        }
    }

    /// A blank value is missing, whatever it holds (as `POST /orders` reads it).
    fn required(&mut self, name: &str, raw: &str, max: usize, kind: TextKind) -> String {
        if raw.trim().is_empty() {
            self.fail(name, Problem::Required);
            return String::new();
        }
        self.optional(name, Some(raw), max, kind)
            .unwrap_or_default()
    }

    fn phone(&mut self, name: &str, raw: Option<&str>) -> Option<String> {
        phone(raw?)
            .map_err(|problem| self.fail(name, problem))
            .ok()
            .flatten()
    }

    fn id(&mut self, name: &str, id: impl Into<i64>) {
        let id: i64 = id.into();
        if id < 1 {
            self.fail(
                name,
                Problem::OutOfRange {
                    min: 1,
                    max: i64::MAX,
                },
            );
        }
    }
}

/// One line of an order the platform enters.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DraftLine {
    /// Variant.
    pub variant_id: VariantId,
    /// Pieces (1 to [`MAX_QUANTITY`]).
    pub quantity: i64,
    /// Profit per piece (zero or more, whole piastres).
    pub profit: Decimal,
    /// Warranties chosen (at most [`MAX_WARRANTIES`]).
    pub warranty_ids: Vec<WarrantyId>,
}

impl DraftLine {
    /// A `DraftLine` of its fields, in their order (`warranty_ids` empty: no warranty).
    pub fn new(
        variant_id: VariantId,
        quantity: i64,
        profit: Decimal,
        warranty_ids: Vec<WarrantyId>,
    ) -> Self {
        Self {
            variant_id,
            quantity,
            profit,
            warranty_ids,
        }
    }
}

/// An order the platform enters itself (its own checkout, or an import), checked by the
/// same rules as `POST /orders`: build one with `OrderDraft::builder()` (the customer's name,
/// phone and address, the shipping option and the governorate required; what is optional
/// left out is `None`, the lines left out are none).
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct OrderDraft {
    /// The marketer's order number (unique per account; at most [`MAX_REFERENCE`]).
    pub external_reference: Option<String>,
    /// Customer name (required; at most [`MAX_TEXT`]).
    pub full_name: String,
    /// Customer mobile (`+20`/`0020` accepted; normalised to `01` and 9 digits).
    pub phone: String,
    /// Second mobile.
    pub second_phone: Option<String>,
    /// Address (required; may hold line breaks; at most [`MAX_TEXT`]).
    pub address: String,
    /// Governorate.
    pub governorate_id: GovernorateId,
    /// Shipping option.
    pub shipping_option_id: ShippingOptionId,
    /// Store name.
    pub store_name: Option<String>,
    /// Store link (http or https).
    pub store_link: Option<String>,
    /// Note (may hold line breaks; at most [`MAX_NOTE`]).
    pub note: Option<String>,
    /// Lines (1 to [`MAX_LINES`]; none when the builder is not given them).
    #[builder(default)]
    pub lines: Vec<DraftLine>,
    /// Number from before reference numbers (imports; at most [`MAX_REFERENCE`]).
    pub legacy_number: Option<String>,
}

impl OrderDraft {
    /// Checks every field by the rules of `POST /orders` and returns the order request
    /// (texts trimmed, phones normalised; blank optional texts dropped), or every problem
    /// found. The catalogue, shipping and stock are checked when the order is placed.
    pub(crate) fn check(self, billed: bool) -> Result<OrderRequest, Vec<FieldProblem>> {
        use TextKind::{MultiLine, SingleLine};
        let mut c = Checker {
            prefix: String::new(),
            problems: Vec::new(),
        };
        let external_reference = c.optional(
            "external_reference",
            self.external_reference.as_deref(),
            MAX_REFERENCE,
            SingleLine,
        );
        let full_name = c.required("full_name", &self.full_name, MAX_TEXT, SingleLine);
        let phone = if self.phone.trim().is_empty() {
            c.fail("phone", Problem::Required);
            None
        } else {
            c.phone("phone", Some(&self.phone))
        };
        let second_phone = c.phone("second_phone", self.second_phone.as_deref());
        let address = c.required("address", &self.address, MAX_TEXT, MultiLine);
        let store_name = c.optional(
            "store_name",
            self.store_name.as_deref(),
            MAX_TEXT,
            SingleLine,
        );
        let store_link = c
            .optional(
                "store_link",
                self.store_link.as_deref(),
                MAX_TEXT,
                SingleLine,
            )
            .filter(|link| {
                let valid = is_web_link(link);
                if !valid {
                    c.fail("store_link", Problem::InvalidUrl);
                }
                valid
            });
        let note = c.optional("note", self.note.as_deref(), MAX_NOTE, MultiLine);
        let legacy_number = c.optional(
            "legacy_number",
            self.legacy_number.as_deref(),
            MAX_REFERENCE,
            SingleLine,
        );
        c.id("shipping_option_id", self.shipping_option_id);
        c.id("governorate_id", self.governorate_id);
        if !(1..=MAX_LINES).contains(&self.lines.len()) {
            c.fail("lines", Problem::LineCount);
        }
        let mut lines = Vec::with_capacity(self.lines.len());
        for (index, line) in self.lines.into_iter().enumerate() {
            c.prefix = format!("lines.{index}.");
            c.id("variant_id", line.variant_id);
            if !(1..=MAX_QUANTITY).contains(&line.quantity) {
                c.fail(
                    "quantity",
                    Problem::OutOfRange {
                        min: 1,
                        max: MAX_QUANTITY,
                    },
                );
            }
            let profit = accepted_amount(line.profit);
            if profit.is_none() {
                c.fail("profit", Problem::InvalidAmount);
            }
            if line.warranty_ids.len() > MAX_WARRANTIES {
                c.fail("warranty_ids", Problem::TooManyWarranties);
            }
            lines.push(LineRequest {
                variant_id: line.variant_id,
                quantity: line.quantity,
                profit: profit.unwrap_or_default(),
                warranty_ids: line.warranty_ids,
            });
        }
        if !c.problems.is_empty() {
            return Err(c.problems);
        }
        Ok(OrderRequest {
            external_reference,
            full_name,
            phone: phone.unwrap_or_default(),
            second_phone,
            address,
            store_name,
            store_link,
            note,
            checkout: CheckoutRequest {
                shipping_option_id: self.shipping_option_id,
                governorate_id: self.governorate_id,
                lines,
            },
            legacy_number,
            billed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft() -> OrderDraft {
        OrderDraft::builder()
            .full_name("سارة حسن".to_owned())
            .phone("+20 100 123 4567".to_owned())
            .address(" 12 شارع النيل\nالدقي ".to_owned())
            .shipping_option_id(ShippingOptionId::new(1))
            .governorate_id(GovernorateId::new(1))
            .lines(vec![DraftLine::new(
                VariantId::new(7),
                2,
                Decimal::new(5000, 2),
                Vec::new(),
            )])
            .build()
    }

    fn fields(problems: &[FieldProblem]) -> Vec<(&str, Problem)> {
        problems
            .iter()
            .map(|p| (p.field.as_str(), p.problem))
            .collect()
    }

    #[test]
    fn a_valid_draft_is_cleaned() {
        let request = draft().check(false).expect("valid");
        assert_eq!(request.phone, "01001234567");
        assert_eq!(request.address, "12 شارع النيل\nالدقي");
        assert_eq!(request.checkout.lines[0].profit.to_string(), "50.00");
        assert!(!request.billed);
    }

    #[test]
    fn every_broken_field_is_named() {
        let mut bad = draft();
        bad.full_name = "  ".into();
        bad.phone = "012".into();
        bad.address = "a\u{7}b".into();
        bad.store_link = Some("http:///nohost".into());
        bad.note = Some("x".repeat(MAX_NOTE + 1));
        bad.lines = vec![
            DraftLine::new(VariantId::new(0), -5, Decimal::new(-10000, 2), Vec::new()),
            DraftLine::new(
                VariantId::new(7),
                1,
                Decimal::new(1, 3),
                vec![WarrantyId::new(1); 11],
            ),
        ];
        let problems = bad.check(true).expect_err("invalid");
        assert_eq!(
            fields(&problems),
            vec![
                ("full_name", Problem::Required),
                ("phone", Problem::InvalidPhone),
                ("address", Problem::NotPrintable { multi_line: true }),
                ("store_link", Problem::InvalidUrl),
                ("note", Problem::TooLong { max: MAX_NOTE }),
                (
                    "lines.0.variant_id",
                    Problem::OutOfRange {
                        min: 1,
                        max: i64::MAX
                    }
                ),
                (
                    "lines.0.quantity",
                    Problem::OutOfRange {
                        min: 1,
                        max: MAX_QUANTITY
                    }
                ),
                ("lines.0.profit", Problem::InvalidAmount),
                ("lines.1.profit", Problem::InvalidAmount),
                ("lines.1.warranty_ids", Problem::TooManyWarranties),
            ]
        );
    }

    #[test]
    fn an_order_needs_lines_and_a_phone() {
        let mut bad = draft();
        bad.lines.clear();
        bad.phone = " ".into();
        let problems = bad.check(false).expect_err("invalid");
        assert_eq!(
            fields(&problems),
            vec![("phone", Problem::Required), ("lines", Problem::LineCount)]
        );
    }
}
