//! One record of a change file, parsed into the typed contract or refused with a reason.

use chrono::{FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};
use std::fmt;

/// The largest amount DECIMAL(10,2) holds, in cents: 99,999,999.99.
pub const MAX_AMOUNT_CENTS: i64 = 9_999_999_999;

/// One order change, typed as the `orders` table stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderChange {
    pub order_id: i64,
    pub customer_id: Option<String>,
    pub status: Option<String>,
    /// DECIMAL(10,2) as a count of hundredths.
    pub amount_cents: Option<i64>,
    pub currency: Option<String>,
    /// Microseconds since the Unix epoch, UTC.
    pub ordered_at: Option<i64>,
    /// Microseconds since the Unix epoch, UTC.
    pub updated_at: i64,
}

/// Why a record was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RejectReason {
    FieldCount(usize),
    NotUtf8,
    OrderId(String),
    Amount(String),
    Timestamp {
        column: &'static str,
        detail: String,
    },
    MissingUpdatedAt,
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::FieldCount(n) => write!(f, "has {n} fields, expected 7"),
            Self::NotUtf8 => write!(f, "is not valid UTF-8"),
            Self::OrderId(d) => write!(f, "order_id {d}"),
            Self::Amount(d) => write!(f, "amount {d}"),
            Self::Timestamp { column, detail } => write!(f, "{column} {detail}"),
            Self::MissingUpdatedAt => write!(f, "updated_at is empty"),
        }
    }
}

/// Parses the 7 fields of a record (already split and decoded) into an [`OrderChange`].
pub fn parse_fields(fields: &[&str]) -> Result<OrderChange, RejectReason> {
    let [order_id, customer_id, status, amount, currency, ordered_at, updated_at] = fields else {
        return Err(RejectReason::FieldCount(fields.len()));
    };
    let order_id = parse_order_id(order_id).map_err(RejectReason::OrderId)?;
    let amount_cents = if amount.is_empty() {
        None
    } else {
        Some(parse_amount(amount).map_err(RejectReason::Amount)?)
    };
    let ordered_at = if ordered_at.is_empty() {
        None
    } else {
        Some(
            parse_timestamp(ordered_at).map_err(|detail| RejectReason::Timestamp {
                column: "ordered_at",
                detail,
            })?,
        )
    };
    if updated_at.is_empty() {
        return Err(RejectReason::MissingUpdatedAt);
    }
    let updated_at = parse_timestamp(updated_at).map_err(|detail| RejectReason::Timestamp {
        column: "updated_at",
        detail,
    })?;
    Ok(OrderChange {
        order_id,
        customer_id: text(customer_id),
        status: text(status),
        amount_cents,
        currency: text(currency),
        ordered_at,
        updated_at,
    })
}

fn text(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

/// Splits an optional leading sign from a run of ASCII digits.
fn signed_digits(s: &str) -> Option<(bool, &str)> {
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some((negative, digits))
}

/// A value as a reason quotes it: in quotes, cut after 40 characters (the whole
/// record stays in `raw_line`).
fn shown(s: &str) -> String {
    const KEEP: usize = 40;
    match s.char_indices().nth(KEEP) {
        None => format!("{s:?}"),
        Some((cut, _)) => format!("{:?}... ({} bytes)", &s[..cut], s.len()),
    }
}

/// A 64-bit integer written as an optional sign and digits.
pub fn parse_order_id(s: &str) -> Result<i64, String> {
    if s.is_empty() {
        return Err("is empty".to_string());
    }
    if signed_digits(s).is_none() {
        return Err(format!(
            "{} is not an integer (optional sign and digits only)",
            shown(s)
        ));
    }
    s.parse::<i64>()
        .map_err(|_| format!("{} does not fit a 64-bit integer", shown(s)))
}

/// Plain decimal notation with at most 2 decimals, fitting DECIMAL(10,2); never rounded.
pub fn parse_amount(s: &str) -> Result<i64, String> {
    let (int_part, frac_part) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s, None),
    };
    let Some((negative, int_digits)) = signed_digits(int_part) else {
        return Err(format!("{} is not plain decimal notation", shown(s)));
    };
    let frac = match frac_part {
        None => 0,
        Some(f) if f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()) => {
            return Err(format!("{} is not plain decimal notation", shown(s)))
        }
        Some(f) if f.len() > 2 => {
            return Err(format!(
                "{} has more than 2 decimals (not rounded)",
                shown(s)
            ))
        }
        Some(f) => f.parse::<i64>().unwrap_or(0) * if f.len() == 1 { 10 } else { 1 },
    };
    let significant = int_digits.trim_start_matches('0');
    if significant.len() > 8 {
        return Err(format!("{} does not fit DECIMAL(10,2)", shown(s)));
    }
    let int: i64 = if significant.is_empty() {
        0
    } else {
        significant
            .parse()
            .map_err(|_| format!("{} does not fit DECIMAL(10,2)", shown(s)))?
    };
    let cents = int * 100 + frac;
    debug_assert!(cents <= MAX_AMOUNT_CENTS);
    Ok(if negative { -cents } else { cents })
}

/// ISO-8601 date and time, `T` or a space between, optional fraction (to microseconds),
/// optional `Z` or offset; without a zone the time is UTC. Returns UTC microseconds.
pub fn parse_timestamp(s: &str) -> Result<i64, String> {
    let bad = || format!("{} is not an ISO-8601 timestamp", shown(s));
    if s.len() < 16 || !s.is_ascii() {
        return Err(bad());
    }
    let (date, rest) = s.split_at(10);
    let date = parse_date(date).ok_or_else(|| format!("{} is not a valid date", shown(s)))?;
    let rest = rest
        .strip_prefix('T')
        .or_else(|| rest.strip_prefix(' '))
        .ok_or_else(bad)?;
    let (clock, zone) = split_zone(rest).ok_or_else(bad)?;
    let time =
        parse_clock(clock).ok_or_else(|| format!("{} is not a valid time of day", shown(s)))?;
    let local = NaiveDateTime::new(date, time);
    let utc = match zone {
        None => Utc.from_utc_datetime(&local),
        Some(offset) => offset
            .from_local_datetime(&local)
            .single()
            .ok_or_else(bad)?
            .with_timezone(&Utc),
    };
    Ok(utc.timestamp_micros())
}

fn digits<T: std::str::FromStr>(s: &str) -> Option<T> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

fn parse_date(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    NaiveDate::from_ymd_opt(digits(&s[0..4])?, digits(&s[5..7])?, digits(&s[8..10])?)
}

/// `HH:MM[:SS[.fraction]]`, second 60 refused.
fn parse_clock(s: &str) -> Option<NaiveTime> {
    let (hms, fraction) = match s.split_once('.') {
        Some((hms, f)) => (hms, Some(f)),
        None => (s, None),
    };
    let mut parts = hms.split(':');
    let (h, m) = (parts.next()?, parts.next()?);
    let sec = parts.next();
    if parts.next().is_some() || h.len() != 2 || m.len() != 2 {
        return None;
    }
    if sec.is_none() && fraction.is_some() {
        return None;
    }
    let sec: u32 = match sec {
        Some(x) if x.len() == 2 => digits(x)?,
        Some(_) => return None,
        None => 0,
    };
    let micro: u32 = match fraction {
        None => 0,
        Some(f) if f.is_empty() || f.len() > 6 => return None,
        Some(f) => digits::<u32>(f)? * 10u32.pow(6 - f.len() as u32),
    };
    if sec >= 60 {
        return None;
    }
    NaiveTime::from_hms_micro_opt(digits(h)?, digits(m)?, sec, micro)
}

/// Splits `Z`, `+HH:MM`, `+HHMM` or `+HH` (or `-`) off the end of a time.
fn split_zone(s: &str) -> Option<(&str, Option<FixedOffset>)> {
    if let Some(clock) = s.strip_suffix('Z').or_else(|| s.strip_suffix('z')) {
        return Some((clock, FixedOffset::east_opt(0)));
    }
    let Some(pos) = s.rfind(['+', '-']) else {
        return Some((s, None));
    };
    let (clock, zone) = s.split_at(pos);
    let sign = if zone.starts_with('-') { -1 } else { 1 };
    let z = &zone[1..];
    let (h, m) = match z.len() {
        2 => (z, "00"),
        4 => (&z[..2], &z[2..]),
        5 if &z[2..3] == ":" => (&z[..2], &z[3..]),
        _ => return None,
    };
    let (h, m): (i32, i32) = (digits(h)?, digits(m)?);
    if h > 23 || m > 59 {
        return None;
    }
    Some((
        clock,
        Some(FixedOffset::east_opt(sign * (h * 3600 + m * 60))?),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> i64 {
        parse_timestamp(s).unwrap()
    }

    #[test]
    fn long_values_are_cut_in_reasons() {
        let long = "9".repeat(1000);
        let reason = parse_amount(&format!("x{long}")).unwrap_err();
        assert!(reason.len() < 100, "{reason}");
        assert!(
            reason.ends_with("... (1001 bytes) is not plain decimal notation"),
            "{reason}"
        );
        assert_eq!(
            parse_amount("1e3").unwrap_err(),
            "\"1e3\" is not plain decimal notation"
        );
    }

    #[test]
    fn order_ids() {
        assert_eq!(parse_order_id("1001"), Ok(1001));
        assert_eq!(parse_order_id("-7"), Ok(-7));
        assert_eq!(parse_order_id("+7"), Ok(7));
        assert_eq!(parse_order_id("9223372036854775807"), Ok(i64::MAX));
        assert!(parse_order_id("9223372036854775808")
            .unwrap_err()
            .contains("64-bit"));
        for bad in ["", " 1", "1 ", "1e3", "1.0", "0x10", "-", "1_000", "１"] {
            assert!(parse_order_id(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn amounts_are_exact_or_rejected() {
        assert_eq!(parse_amount("25.50"), Ok(2550));
        assert_eq!(parse_amount("12"), Ok(1200));
        assert_eq!(parse_amount("8.7"), Ok(870));
        assert_eq!(parse_amount("-0.01"), Ok(-1));
        assert_eq!(parse_amount("+3.00"), Ok(300));
        assert_eq!(parse_amount("99999999.99"), Ok(MAX_AMOUNT_CENTS));
        assert_eq!(parse_amount("000012.00"), Ok(1200));
        assert!(parse_amount("100000000")
            .unwrap_err()
            .contains("DECIMAL(10,2)"));
        assert!(parse_amount("12.345")
            .unwrap_err()
            .contains("more than 2 decimals"));
        for bad in [
            "abc", "1e3", " 12.00 ", "12.", ".5", "1,000.00", "$5", "12.0a", "--1", "",
        ] {
            assert!(parse_amount(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn timestamps() {
        let base = ts("2026-10-01T09:15:00");
        assert_eq!(base, 1_790_846_100_000_000);
        assert_eq!(ts("2026-10-01 09:15:00"), base);
        assert_eq!(ts("2026-10-01T09:15:00Z"), base);
        assert_eq!(ts("2026-10-01T11:15:00+02:00"), base);
        assert_eq!(ts("2026-10-01T11:15:00+0200"), base);
        assert_eq!(ts("2026-10-01T07:15:00-02"), base);
        assert_eq!(ts("2026-10-01T09:15"), base);
        assert_eq!(ts("2026-10-01T09:15:00.5") - base, 500_000);
        assert_eq!(ts("2026-10-01T09:15:00.000001Z") - base, 1);
        assert!(ts("0001-01-01T00:00:00") < 0);
        assert!(ts("9999-12-31T23:59:59.999999") > 0);
        for bad in [
            "2026-02-30T00:00:00",
            "2026-10-01T09:15:60",
            "2026-10-01T24:00:00",
            "2026-10-01",
            "2026-10-01T09:15:00.1234567",
            "2026-10-01T09:15:00+25:00",
            "01/10/2026 09:15",
            "2026-10-01X09:15:00",
            "2026-1-01T09:15:00",
            "2026-10-01T9:15:00",
            "2026-10-01T09:15:00 ",
        ] {
            assert!(parse_timestamp(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn fields() {
        let ok = parse_fields(&[
            "1001",
            "C01",
            "placed",
            "25.50",
            "EUR",
            "2026-10-01T09:15:00",
            "2026-10-01T09:15:00",
        ])
        .unwrap();
        assert_eq!(ok.order_id, 1001);
        assert_eq!(ok.amount_cents, Some(2550));
        let empty = parse_fields(&["1", "", "", "", "", "", "2026-10-01T09:15:00"]).unwrap();
        assert_eq!(
            (empty.customer_id, empty.amount_cents, empty.ordered_at),
            (None, None, None)
        );
        assert_eq!(
            parse_fields(&["1", "", "", "", "", ""]),
            Err(RejectReason::FieldCount(6))
        );
        assert_eq!(
            parse_fields(&["1", "", "", "", "", "", ""]),
            Err(RejectReason::MissingUpdatedAt)
        );
        assert!(matches!(
            parse_fields(&["", "", "", "", "", "", "2026-10-01T09:15:00"]),
            Err(RejectReason::OrderId(_))
        ));
        assert!(matches!(
            parse_fields(&[
                "1",
                "",
                "",
                "",
                "",
                "2026-02-30T00:00:00",
                "2026-10-01T09:15:00"
            ]),
            Err(RejectReason::Timestamp {
                column: "ordered_at",
                ..
            })
        ));
    }
}
