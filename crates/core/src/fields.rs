//! Field texts parsed strictly into numbers and booleans: no rounding, no
//! locale, no silent truncation. Errors are the detail after the column name.

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
pub fn shown(s: &str) -> String {
    const KEEP: usize = 40;
    match s.char_indices().nth(KEEP) {
        None => format!("{s:?}"),
        Some((cut, _)) => format!("{:?}... ({} bytes)", &s[..cut], s.len()),
    }
}

/// An integer written as an optional sign and digits, within `bits` (32 or 64).
pub fn parse_integer(s: &str, bits: u32) -> Result<i64, String> {
    if s.is_empty() {
        return Err("is empty".to_string());
    }
    if signed_digits(s).is_none() {
        return Err(format!(
            "{} is not an integer (optional sign and digits only)",
            shown(s)
        ));
    }
    let too_big = || format!("{} does not fit a {bits}-bit integer", shown(s));
    let value = s.parse::<i64>().map_err(|_| too_big())?;
    if bits == 32 && i32::try_from(value).is_err() {
        return Err(too_big());
    }
    Ok(value)
}

/// A 64-bit integer written as an optional sign and digits.
pub fn parse_order_id(s: &str) -> Result<i64, String> {
    parse_integer(s, 64)
}

/// Plain decimal notation with at most `scale` decimals, fitting
/// DECIMAL(precision, scale); never rounded. Returns the count of 10^-scale.
pub fn parse_decimal(s: &str, precision: u8, scale: u8) -> Result<i128, String> {
    let not_plain = || format!("{} is not plain decimal notation", shown(s));
    let (int_part, frac_part) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s, None),
    };
    let Some((negative, int_digits)) = signed_digits(int_part) else {
        return Err(not_plain());
    };
    let frac = frac_part.unwrap_or("");
    if frac_part.is_some() && (frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit())) {
        return Err(not_plain());
    }
    if frac.len() > usize::from(scale) {
        return Err(format!(
            "{} has more than {scale} decimals (not rounded)",
            shown(s)
        ));
    }
    let significant = int_digits.trim_start_matches('0');
    let doesnt_fit = || format!("{} does not fit DECIMAL({precision},{scale})", shown(s));
    if significant.len() > usize::from(precision - scale) {
        return Err(doesnt_fit());
    }
    // At most 38 digits in all: fits an i128; no text is built.
    let mut magnitude: i128 = 0;
    for digit in significant.bytes().chain(frac.bytes()) {
        magnitude = magnitude * 10 + i128::from(digit - b'0');
    }
    magnitude *= 10i128.pow(u32::from(scale) - frac.len() as u32);
    Ok(if negative { -magnitude } else { magnitude })
}

/// `true`, `false`, `1` or `0`, in any case.
pub fn parse_boolean(s: &str) -> Result<bool, String> {
    if s == "1" || s.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if s == "0" || s.eq_ignore_ascii_case("false") {
        Ok(false)
    } else {
        Err(format!(
            "{} is not a boolean (true, false, 1 or 0)",
            shown(s)
        ))
    }
}

/// A finite number in decimal or exponent notation (`-1.5`, `2e10`); no
/// `NaN`, no infinities, no spaces, no thousands separators.
pub fn parse_double(s: &str) -> Result<f64, String> {
    let bad = || format!("{} is not a finite number", shown(s));
    let allowed = |b: u8| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E');
    if s.is_empty() || !s.bytes().all(allowed) || !s.bytes().any(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    match s.parse::<f64>() {
        // -0 is stored as 0: SQL and the newest-wins order then agree that they are equal.
        Ok(v) if v.is_finite() => Ok(v + 0.0),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_in_reasons() {
        let long = "9".repeat(1000);
        let reason = parse_decimal(&format!("x{long}"), 10, 2).unwrap_err();
        assert!(reason.len() < 100, "{reason}");
        assert!(
            reason.ends_with("... (1001 bytes) is not plain decimal notation"),
            "{reason}"
        );
        assert_eq!(
            parse_decimal("1e3", 10, 2).unwrap_err(),
            "\"1e3\" is not plain decimal notation"
        );
    }

    #[test]
    fn integers() {
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
        assert_eq!(parse_integer("2147483647", 32), Ok(i64::from(i32::MAX)));
        assert!(parse_integer("2147483648", 32)
            .unwrap_err()
            .contains("32-bit"));
    }

    #[test]
    fn decimals_are_exact_or_rejected() {
        let amount = |s| parse_decimal(s, 10, 2);
        assert_eq!(amount("25.50"), Ok(2550));
        assert_eq!(amount("12"), Ok(1200));
        assert_eq!(amount("8.7"), Ok(870));
        assert_eq!(amount("-0.01"), Ok(-1));
        assert_eq!(amount("+3.00"), Ok(300));
        assert_eq!(amount("99999999.99"), Ok(9_999_999_999));
        assert_eq!(amount("000012.00"), Ok(1200));
        assert!(amount("100000000").unwrap_err().contains("DECIMAL(10,2)"));
        assert!(amount("12.345")
            .unwrap_err()
            .contains("more than 2 decimals"));
        for bad in [
            "abc", "1e3", " 12.00 ", "12.", ".5", "1,000.00", "$5", "12.0a", "--1", "",
        ] {
            assert!(amount(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(parse_decimal("7", 3, 0), Ok(7));
        assert!(parse_decimal("7.1", 3, 0).is_err());
        let widest = format!("{}.{}", "9".repeat(20), "9".repeat(18));
        assert_eq!(
            parse_decimal(&widest, 38, 18),
            Ok(10i128.pow(38) - 1),
            "38 digits fit"
        );
    }

    #[test]
    fn booleans_and_doubles() {
        for (s, b) in [("TRUE", true), ("false", false), ("1", true), ("0", false)] {
            assert_eq!(parse_boolean(s), Ok(b));
        }
        for bad in ["yes", "", "t", "2"] {
            assert!(parse_boolean(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(parse_double("-1.5e3"), Ok(-1500.0));
        assert_eq!(parse_double("7"), Ok(7.0));
        assert!(parse_double("-0.0").unwrap().is_sign_positive());
        for bad in ["NaN", "inf", "1e999", " 1", "1,5", "", "e", "."] {
            assert!(parse_double(bad).is_err(), "{bad:?} accepted");
        }
    }
}
