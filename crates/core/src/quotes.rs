//! Quotes the CSV reader lets pass but RFC 4180 does not: a quoted field
//! left open (the reader ends it at the end of the file, taking every later
//! record into it) and text after a field's closing quote (the reader
//! appends it, so a stray quote can take the next line into a field). A
//! record with either is a reject, never a row.

/// What is wrong with the quotes of `raw`, one record as the CSV reader read
/// it with `delimiter`; `None` when nothing is. A quote opens a field only at
/// its start (elsewhere it is text, as for the reader), and two quotes in a
/// quoted field are one quote.
pub(crate) fn problem(raw: &[u8], delimiter: u8) -> Option<&'static str> {
    if !raw.contains(&b'"') {
        return None;
    }
    #[derive(PartialEq)]
    enum At {
        Start,
        Plain,
        Quoted,
        Closed,
    }
    let ends = |b: u8| b == delimiter || b == b'\n' || b == b'\r';
    let mut at = At::Start;
    for &b in raw {
        at = match at {
            At::Start if b == b'"' => At::Quoted,
            At::Quoted if b == b'"' => At::Closed,
            At::Quoted => At::Quoted,
            // A quote after a closing one is a quote within the field.
            At::Closed if b == b'"' => At::Quoted,
            _ if ends(b) => At::Start,
            At::Closed => return Some(AFTER),
            _ => At::Plain,
        };
    }
    (at == At::Quoted).then_some(OPEN)
}

/// A quoted field left open.
pub(crate) const OPEN: &str = "a quoted field is not closed, so the record runs to the end of \
                               the file (its text holds every line after it); close the quote \
                               and upload the file again";

/// Text after a closing quote.
const AFTER: &str = "a quoted field has text after its closing quote (a quote inside a quoted \
                     field is written twice: \"a \"\"b\"\" c\"); fix the quotes and upload the file \
                     again";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_as_rfc_4180_has_them() {
        for fine in [
            &b"1,plain\n"[..],
            b"1,\"a, \"\"b\"\"\nc\"\r\n",
            b"1,x\"y\n",
            b"\"\",\"\"\n",
            b"1,\"a\"",
        ] {
            assert_eq!(
                problem(fine, b','),
                None,
                "{}",
                String::from_utf8_lossy(fine)
            );
        }
        assert_eq!(problem(b"1,\"open\n2,b\n", b','), Some(OPEN));
        assert_eq!(problem(b"1,\"ab\"cd,x\n", b','), Some(AFTER));
        assert_eq!(problem(b"2,x,\"open\n3,x,\"closed\"\n", b','), Some(AFTER));
        assert_eq!(problem(b"1;\"a\";b\n", b';'), None);
        assert_eq!(problem(b"1;\"a\",b\n", b';'), Some(AFTER));
    }
}
