//! Standard output that ends quietly when its reader goes away (`| head`).
//!
//! `println!` panics when standard output is a closed pipe. Every line of the
//! commands is written with [`out!`] instead, which returns the error; the
//! command then stops, and [`main_entry`](crate::main_entry) exits without a
//! message with [`CLOSED_PIPE`], as a Unix tool killed by SIGPIPE does.

use std::io::Write;

/// The exit status after the reader of standard output went away: the status a
/// shell reports for a process killed by SIGPIPE (128 + 13).
pub const CLOSED_PIPE: u8 = 141;

/// Writes one line to standard output, returning any error (a closed pipe among them).
pub(crate) fn line(text: std::fmt::Arguments<'_>) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(text)?;
    out.write_all(b"\n")
}

/// Whether `error` comes from writing to a pipe whose reader has gone away.
pub fn is_closed_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// `println!` that returns from the enclosing function with the write's error.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::line(format_args!($($arg)*))?
    };
}
pub(crate) use out;

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn a_closed_pipe_is_found_under_any_context() {
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        let wrapped = Err::<(), _>(pipe)
            .context("printing table orders")
            .context("show")
            .unwrap_err();
        assert!(is_closed_pipe(&wrapped));
        let full = std::io::Error::other("disk full");
        assert!(!is_closed_pipe(&anyhow::Error::new(full)));
    }
}
