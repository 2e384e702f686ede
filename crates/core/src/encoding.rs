//! A file's bytes decoded to UTF-8 from the dataset's encoding, and, when its
//! header is refused, what setting would have read it.

use crate::contract::{check_header, HeaderMismatch};
use crate::spec::{Dataset, Encoding};
use std::borrow::Cow;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The file as UTF-8 bytes (a UTF-8 BOM removed). UTF-8 is not checked here:
/// a record with invalid UTF-8 is rejected on its own, the rest of the file loads.
pub fn decode<'a>(dataset: &Dataset, bytes: &'a [u8]) -> Result<Cow<'a, [u8]>, HeaderMismatch> {
    Ok(match dataset.csv.encoding {
        Encoding::Utf8 => Cow::Borrowed(bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes)),
        Encoding::Utf16 => match encoding_rs::Encoding::for_bom(bytes) {
            Some((enc, bom)) if enc != encoding_rs::UTF_8 => {
                match enc.decode_without_bom_handling_and_without_replacement(&bytes[bom..]) {
                    Some(text) => Cow::Owned(text.into_owned().into_bytes()),
                    None => {
                        return Err(HeaderMismatch::new(
                            dataset,
                            Vec::new(),
                            format!(
                                "the file is not valid {} (a lone surrogate or an odd byte at \
                                 the end): export it again",
                                enc.name()
                            ),
                        ))
                    }
                }
            }
            _ => {
                return Err(HeaderMismatch::new(
                    dataset,
                    Vec::new(),
                    "the file has no UTF-16 byte-order mark although encoding = \"utf-16\": \
                     export it as UTF-16 with a BOM, or set the encoding it has"
                        .to_string(),
                ))
            }
        },
        Encoding::Windows1252 => {
            let (text, _) = encoding_rs::WINDOWS_1252.decode_without_bom_handling(bytes);
            Cow::Owned(text.into_owned().into_bytes())
        }
        // Every byte is the code point of the same value (encoding_rs would
        // read this label as windows-1252).
        Encoding::Iso88591 => Cow::Owned(
            bytes
                .iter()
                .map(|&b| char::from(b))
                .collect::<String>()
                .into_bytes(),
        ),
    })
}

/// Why a refused file was refused, when another setting explains it: a
/// UTF-16 file read as UTF-8, or a header that matches with another delimiter.
pub fn hint(dataset: &Dataset, bytes: &[u8]) -> Option<String> {
    if dataset.csv.encoding != Encoding::Utf16 && looks_utf16(bytes) {
        return Some(
            "the file is UTF-16 (Excel's \"Unicode text\"): set encoding = \"utf-16\" in the \
             dataset's [dataset.csv], or export it as UTF-8"
                .to_string(),
        );
    }
    let body = decode(dataset, bytes).ok()?;
    let first_line = body.split(|b| *b == b'\n').next()?;
    for delimiter in [b',', b';', b'\t', b'|'] {
        if delimiter == dataset.csv.field_delimiter {
            continue;
        }
        let names: Vec<String> = first_line
            .strip_suffix(b"\r")
            .unwrap_or(first_line)
            .split(|b| *b == delimiter)
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect();
        if names.len() > 1 && check_header(dataset, Some(&names)).is_ok() {
            let shown = if delimiter == b'\t' {
                "\\t".to_string()
            } else {
                char::from(delimiter).to_string()
            };
            return Some(format!(
                "the header matches with field_delimiter = \"{shown}\": set it in the dataset's [dataset.csv]"
            ));
        }
    }
    None
}

/// A UTF-16 byte-order mark, or a first line whose every other byte is NUL.
fn looks_utf16(bytes: &[u8]) -> bool {
    if bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
        return true;
    }
    let head = &bytes[..bytes.len().min(64)];
    head.len() >= 8 && head.iter().filter(|b| **b == 0).count() * 3 >= head.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::read_file;
    use crate::spec::Spec;

    const HEADER: &str = "order_id,customer_id,status,amount,currency,ordered_at,updated_at";

    fn utf16le(text: &str) -> Vec<u8> {
        let mut out = vec![0xFF, 0xFE];
        out.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        out
    }

    #[test]
    fn a_utf16_export_is_refused_with_the_setting_to_change() {
        let file = utf16le(&format!(
            "{HEADER}\r\n1,C,placed,1.00,EUR,,2026-10-01T00:00:00\r\n"
        ));
        let refused = read_file(&Dataset::orders(), &file).unwrap_err();
        assert!(refused.problem.contains("the file is UTF-16"), "{refused}");
        assert!(
            refused.to_string().contains("set encoding = \"utf-16\""),
            "{refused}"
        );
    }

    #[test]
    fn a_semicolon_file_is_refused_with_the_delimiter_that_matches() {
        let file = format!(
            "{}\n1;C;placed;1.00;EUR;;2026-10-01T00:00:00\n",
            HEADER.replace(',', ";")
        );
        let refused = read_file(&Dataset::orders(), file.as_bytes()).unwrap_err();
        assert!(
            refused.problem.contains("field_delimiter = \";\""),
            "{refused}"
        );
    }

    #[test]
    fn declared_encodings_are_decoded() {
        let spec = |encoding: &str| {
            Spec::parse(&format!("[[dataset]]\nname = \"t\"\nkeys = [\"k\"]\n[dataset.csv]\nencoding = \"{encoding}\"\n[[dataset.columns]]\nname = \"k\"\ntype = \"int\"\n[[dataset.columns]]\nname = \"city\"\ntype = \"string\"\n"), "t.toml").unwrap().datasets.remove(0)
        };
        let city =
            |d: &Dataset, bytes: &[u8]| read_file(d, bytes).unwrap().changes.row(0)[1].as_text();
        let utf16 = spec("utf-16");
        assert_eq!(
            city(&utf16, &utf16le("k,city\r\n1,Köln\r\n")).as_deref(),
            Some("Köln")
        );
        let mut be = vec![0xFE, 0xFF];
        be.extend("k,city\n1,Köln\n".encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(city(&utf16, &be).as_deref(), Some("Köln"));
        assert!(read_file(&utf16, b"k,city\n1,x\n")
            .unwrap_err()
            .problem
            .contains("no UTF-16 byte-order mark"));
        let mut broken = utf16le("k,city\r\n1,x\r\n");
        broken.push(0x41);
        let refused = read_file(&utf16, &broken).unwrap_err();
        assert!(refused.problem.contains("not valid UTF-16LE"), "{refused}");
        assert_eq!(
            city(&spec("windows-1252"), b"k,city\n1,K\xf6ln \x80\n").as_deref(),
            Some("Köln €")
        );
        assert_eq!(
            city(&spec("iso-8859-1"), b"k,city\n1,K\xf6ln \x80\n").as_deref(),
            Some("Köln \u{80}")
        );
    }
}
