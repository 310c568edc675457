//! The pages' forms: reading `application/x-www-form-urlencoded` bodies, and turning the
//! [`Owner`](crate::owner::Owner)'s refusals into messages next to their fields.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use chrono_tz::Africa::Cairo;
use http::StatusCode;
use rust_decimal::Decimal;

use crate::model::Problem;
use crate::operator::{Conflict, OperatorError};
use crate::render::messages;

/// A form's fields in order (a name may repeat: the abilities' checkboxes).
#[derive(Debug, Default)]
pub(crate) struct Form(Vec<(String, String)>);

impl Form {
    /// The fields of a urlencoded body.
    pub(crate) fn parse(body: &[u8]) -> Self {
        Self(form_urlencoded::parse(body).into_owned().collect())
    }

    /// The first value of `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Every value of `name`.
    pub(crate) fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
            .collect()
    }

    /// The value of `name`, empty when absent.
    pub(crate) fn text(&self, name: &str) -> &str {
        self.get(name).unwrap_or_default()
    }
}

/// What a form showed wrong: messages per field, and one for the whole form.
#[derive(Debug, Default, Clone)]
pub(crate) struct Errors {
    pub(crate) fields: BTreeMap<String, Vec<String>>,
    pub(crate) general: Option<String>,
}

impl Errors {
    /// One problem on one field.
    pub(crate) fn field(field: &str, problem: Problem) -> Self {
        let mut errors = Self::default();
        errors.add(field, messages::problem(problem));
        errors
    }

    pub(crate) fn add(&mut self, field: &str, message: String) {
        self.fields
            .entry(field.to_owned())
            .or_default()
            .push(message);
    }

    /// The messages of `field`.
    pub(crate) fn of(&self, field: &str) -> &[String] {
        self.fields
            .get(field)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The status and messages of a refusal, or `None` for one that is not about the form
    /// (not found, a store failure): the caller answers those with a page of their own.
    pub(crate) fn of_error(error: &OperatorError) -> Option<(StatusCode, Self)> {
        let mut errors = Self::default();
        let status = match error {
            OperatorError::Invalid(problems) => {
                for p in problems {
                    errors.add(&p.field, messages::problem(p.problem));
                }
                StatusCode::UNPROCESSABLE_ENTITY
            }
            OperatorError::Conflict(conflict) => {
                let mut status = StatusCode::CONFLICT;
                match conflict {
                    Conflict::OverReadyBalance { ready, .. } => {
                        errors.add("amount", messages::over_ready_balance(*ready));
                    }
                    Conflict::WithdrawalWindowClosed { opens_at } => {
                        errors.general =
                            Some(messages::withdrawal_window_closed(&cairo_day(*opens_at)));
                    }
                    Conflict::ApiStatusNotAllowed { current, .. } => {
                        errors.general = Some(messages::api_status_move_refused(*current));
                    }
                    Conflict::ApiAccessNotApproved { .. } => {
                        errors.general = Some(messages::API_ACCESS_NOT_APPROVED.into());
                    }
                    Conflict::KeyLimit { limit } => {
                        errors.general = Some(messages::key_limit(*limit));
                    }
                    // What the account is, not what was asked: as the API's 403s.
                    Conflict::AccountNotActive { .. } => {
                        errors.general = Some(messages::OWNER_ACCOUNT_NOT_ACTIVE.into());
                        status = StatusCode::FORBIDDEN;
                    }
                    Conflict::ApiSuspendedByTeam => {
                        errors.general = Some(messages::API_SUSPENDED_BY_TEAM.into());
                        status = StatusCode::FORBIDDEN;
                    }
                    _ => errors.general = Some(messages::VALIDATION_FAILED.into()),
                }
                status
            }
            _ => return None,
        };
        Some((status, errors))
    }
}

/// An amount as typed: digits (Western or Arabic-Indic), at most one decimal point.
pub(crate) fn amount(raw: &str) -> Result<Decimal, Problem> {
    let text: String = raw
        .trim()
        .chars()
        .map(|c| match c {
            '٠'..='٩' => char::from(b'0' + (c as u32 - '٠' as u32) as u8),
            '٫' => '.',
            c => c,
        })
        .collect();
    if text.is_empty() {
        return Err(Problem::Required);
    }
    if !text.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(Problem::InvalidAmount);
    }
    text.parse().map_err(|_| Problem::InvalidAmount)
}

/// An instant in Cairo time to the minute (`2026-11-26 14:05`).
pub(crate) fn cairo_minute(at: DateTime<Utc>) -> String {
    at.with_timezone(&Cairo)
        .format("%Y-%m-%d %H:%M")
        .to_string()
}

/// A Cairo calendar day (`2026-11-26`).
pub(crate) fn cairo_day(at: DateTime<Utc>) -> String {
    at.with_timezone(&Cairo).format("%Y-%m-%d").to_string()
}

/// The expiry of a key valid through the Cairo day `date` (`YYYY-MM-DD`): the start of the
/// next day in Cairo.
pub(crate) fn expiry_of_day(date: &str) -> Result<Option<DateTime<Utc>>, Problem> {
    let date = date.trim();
    if date.is_empty() {
        return Ok(None);
    }
    let day =
        chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").map_err(|_| Problem::UnknownValue)?;
    let next = day.succ_opt().ok_or(Problem::UnknownValue)?;
    let start = crate::domain::wallet::start_of_cairo_day(next);
    Ok(Some(start))
}
