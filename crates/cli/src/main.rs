//! The `deltaload` command; everything lives in the library so tests can run it too.

fn main() -> std::process::ExitCode {
    deltaload::main_entry()
}
