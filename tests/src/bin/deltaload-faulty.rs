//! `deltaload` built with the fault switch (`DELTALOAD_FAULT=after-orders` and so on).

fn main() -> std::process::ExitCode {
    deltaload::main_entry()
}
