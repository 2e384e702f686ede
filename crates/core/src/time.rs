//! Dates and timestamps: ISO-8601 as written by most exports, or a column's
//! own strftime `format`; a time without a zone is in the column's `timezone`
//! (UTC by default). Impossible values (February 30th, 24:00, second 60, a
//! local time skipped or repeated by a daylight-saving change) are refused.

use crate::fields::shown;
use chrono::{
    DateTime, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Timelike,
    Utc,
};
use chrono_tz::Tz;

/// Days from 0001-01-01 (chrono's day 1) to 1970-01-01.
const UNIX_EPOCH_DAYS: i32 = 719_163;

/// The earliest and latest days a table holds: 0001-01-01 and 9999-12-31.
const TABLE_DAYS: std::ops::RangeInclusive<i64> = -719_162..=2_932_896;

/// `days` since 1970-01-01 as a date a table holds; why not, showing the
/// value as `text`.
pub fn epoch_days(days: i64, text: &str) -> Result<i32, String> {
    match TABLE_DAYS.contains(&days) {
        true => Ok(days as i32),
        false => Err(format!(
            "{text} days since 1970-01-01 is not a date of years 1 to 9999"
        )),
    }
}

/// `micros` since the epoch (`None`: beyond 64 bits) as a time a table
/// holds; why not, showing the value as `text`.
pub fn epoch_micros(micros: Option<i64>, text: &str) -> Result<i64, String> {
    const DAY: i64 = 86_400_000_000;
    let range = TABLE_DAYS.start() * DAY..=(TABLE_DAYS.end() + 1) * DAY - 1;
    match micros {
        Some(m) if range.contains(&m) => Ok(m),
        _ => Err(format!(
            "{text} is not a time of years 1 to 9999 since the epoch"
        )),
    }
}

/// A `date` column's text as days since 1970-01-01.
pub fn parse_day(s: &str, format: Option<&str>) -> Result<i32, String> {
    let date = match format {
        None => parse_date(s)
            .ok_or_else(|| format!("{} is not an ISO-8601 date (YYYY-MM-DD)", shown(s)))?,
        Some(f) => NaiveDate::parse_from_str(s, f)
            .map_err(|e| format!("{} does not match the format {f:?}: {e}", shown(s)))?,
    };
    Ok(chrono::Datelike::num_days_from_ce(&date) - UNIX_EPOCH_DAYS)
}

/// A `timestamp` column's text as UTC microseconds.
pub fn parse_instant(s: &str, format: Option<&str>, zone: Option<Tz>) -> Result<i64, String> {
    let Some(f) = format else {
        return parse_timestamp_in(s, zone);
    };
    let mismatch =
        |e: chrono::ParseError| format!("{} does not match the format {f:?}: {e}", shown(s));
    if f.contains("%z") || f.contains("%:z") || f.contains("%#z") {
        let t = DateTime::parse_from_str(s, f).map_err(mismatch)?;
        whole_micros(s, t.nanosecond())?;
        return Ok(t.with_timezone(&Utc).timestamp_micros());
    }
    let local = match NaiveDateTime::parse_from_str(s, f) {
        Ok(t) => t,
        // A format with a date only, for a timestamp column: midnight.
        Err(e) => NaiveDate::parse_from_str(s, f)
            .map(|d| d.and_time(NaiveTime::MIN))
            .map_err(|_| mismatch(e))?,
    };
    whole_micros(s, local.nanosecond())?;
    in_zone(s, &local, zone)
}

/// chrono reads second 60 (a leap second) into the nanoseconds, and a
/// format's `%.f` down to nanoseconds; both refused, as on the ISO-8601 path
/// (a fraction's digits past microseconds were dropped).
fn whole_micros(s: &str, nanosecond: u32) -> Result<(), String> {
    if nanosecond >= 1_000_000_000 {
        return Err(format!("{} has second 60, which is not a time", shown(s)));
    }
    if !nanosecond.is_multiple_of(1_000) {
        return Err(nanoseconds(s));
    }
    Ok(())
}

/// ISO-8601 date and time, `T` or a space between, optional fraction (to microseconds),
/// optional `Z` or offset; without a zone the time is UTC. Returns UTC microseconds.
pub fn parse_timestamp(s: &str) -> Result<i64, String> {
    parse_timestamp_in(s, None)
}

fn in_zone(s: &str, local: &NaiveDateTime, zone: Option<Tz>) -> Result<i64, String> {
    let Some(tz) = zone else {
        return Ok(Utc.from_utc_datetime(local).timestamp_micros());
    };
    match tz.from_local_datetime(local) {
        LocalResult::Single(t) => Ok(t.with_timezone(&Utc).timestamp_micros()),
        LocalResult::Ambiguous(..) => Err(format!(
            "{} happens twice in {tz} (a daylight-saving change): write it with its offset",
            shown(s)
        )),
        LocalResult::None => Err(format!(
            "{} does not exist in {tz} (skipped by a daylight-saving change)",
            shown(s)
        )),
    }
}

/// ISO-8601 date and time, `T` or a space between, optional fraction (to microseconds),
/// optional `Z` or offset; without a zone the time is UTC. Returns UTC microseconds.
fn parse_timestamp_in(s: &str, zone: Option<Tz>) -> Result<i64, String> {
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
    let (clock, offset) = split_zone(rest).ok_or_else(bad)?;
    let time = parse_clock(clock).ok_or_else(|| match finer_than_micros(clock) {
        true => nanoseconds(s),
        false => format!("{} is not a valid time of day", shown(s)),
    })?;
    let local = NaiveDateTime::new(date, time);
    match offset {
        None => in_zone(s, &local, zone),
        Some(offset) => Ok(offset
            .from_local_datetime(&local)
            .single()
            .ok_or_else(bad)?
            .with_timezone(&Utc)
            .timestamp_micros()),
    }
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

/// The reason of a timestamp `s` finer than a microsecond.
fn nanoseconds(s: &str) -> String {
    format!(
        "{} has nanoseconds: a timestamp holds whole microseconds",
        shown(s)
    )
}

/// Whether a clock is valid but for digits past the sixth of its fraction
/// of a second, one of them not zero (nanoseconds, as the Parquet and JSON
/// Lines readers say it).
fn finer_than_micros(clock: &str) -> bool {
    let Some((hms, f)) = clock.split_once('.') else {
        return false;
    };
    let digits = f.len() > 6 && f.bytes().all(|b| b.is_ascii_digit());
    digits && parse_clock(&format!("{hms}.{}", &f[..6])).is_some()
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
    // Zeros past microseconds (`.123456000`, as Java and Spark write) are
    // whole microseconds still.
    let fraction = fraction.map(|f| match f.get(6..) {
        Some(rest) if rest.bytes().all(|b| b == b'0') => &f[..6],
        _ => f,
    });
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
        let fine = parse_timestamp("2026-10-01T09:15:00.1234567Z").unwrap_err();
        assert!(
            fine.ends_with("has nanoseconds: a timestamp holds whole microseconds"),
            "{fine}"
        );
        let hour = parse_timestamp("2026-10-01T25:15:00.1234567Z").unwrap_err();
        assert!(hour.ends_with("is not a valid time of day"), "{hour}");
        assert_eq!(
            ts("2026-10-01T09:15:00.123456000Z"),
            ts("2026-10-01T09:15:00.123456Z")
        );
        // With a format, chrono reads nanoseconds: refused, not cut.
        let format = Some("%Y-%m-%d %H:%M:%S%.f");
        let cut = parse_instant("2026-10-01 09:15:00.1234567", format, None).unwrap_err();
        assert!(
            cut.ends_with("has nanoseconds: a timestamp holds whole microseconds"),
            "{cut}"
        );
        let whole = parse_instant("2026-10-01 09:15:00.123456000", format, None);
        assert_eq!(whole, Ok(ts("2026-10-01T09:15:00.123456")));
    }

    #[test]
    fn formats_and_zones() {
        let berlin: Tz = "Europe/Berlin".parse().unwrap();
        let base = ts("2026-10-01T09:15:00");
        assert_eq!(
            parse_instant("2026-10-01 11:15:00", None, Some(berlin)),
            Ok(base)
        );
        assert_eq!(
            parse_instant("2026-10-01T09:15:00Z", None, Some(berlin)),
            Ok(base),
            "an offset wins over the zone"
        );
        assert_eq!(
            parse_instant("01/10/2026 11:15", Some("%d/%m/%Y %H:%M"), Some(berlin)),
            Ok(base)
        );
        assert_eq!(
            parse_instant("01-10-26", Some("%d-%m-%y"), None),
            Ok(ts("2026-10-01T00:00:00"))
        );
        let gap = parse_instant("2026-03-29 02:30:00", None, Some(berlin)).unwrap_err();
        assert!(gap.contains("does not exist in Europe/Berlin"), "{gap}");
        let twice = parse_instant("2026-10-25 02:30:00", None, Some(berlin)).unwrap_err();
        assert!(twice.contains("happens twice"), "{twice}");
        assert!(parse_instant("2026-10-01", Some("%d-%m-%y"), None)
            .unwrap_err()
            .contains("does not match the format"));
        assert_eq!(parse_day("1970-01-02", None), Ok(1));
        assert_eq!(parse_day("02-01-70", Some("%d-%m-%y")), Ok(1));
        assert!(parse_day("2026-02-30", None).is_err());
        assert!(parse_day("30-02-26", Some("%d-%m-%y")).is_err());
        let leap = parse_instant("01/10/2026 23:59:60", Some("%d/%m/%Y %H:%M:%S"), None);
        assert!(leap.unwrap_err().contains("second 60"));
        let leap = parse_instant(
            "2026-10-01 23:59:60 +0000",
            Some("%Y-%m-%d %H:%M:%S %z"),
            None,
        );
        assert!(leap.unwrap_err().contains("second 60"));
    }
}
